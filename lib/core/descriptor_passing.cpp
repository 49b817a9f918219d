#include "core/descriptor_passing.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <random>

#include "core/collective.hpp"
#include "core/error.hpp"
#include "core/mpi_check.hpp"
#include "core/watched_collectives.hpp"

namespace pleshard {

namespace {

constexpr int k_wait_ms = 60000;

// Closes a socket on every path out.
struct Socket {
  int fd = -1;
  ~Socket() {
    if (fd >= 0) ::close(fd);
  }
};

std::string errno_text() { return std::strerror(errno); }

void wait_for(int fd, short events, const std::string& what) {
  pollfd p{fd, events, 0};
  const int ready = ::poll(&p, 1, k_wait_ms);
  if (ready <= 0) throw InputError(what + ": no descriptor passed within " + std::to_string(k_wait_ms / 1000) + " s");
}

void send_fd(int socket, int fd) {
  char byte = 0;
  iovec io{&byte, 1};
  alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof(int))> control{};
  msghdr msg{};
  msg.msg_iov = &io;
  msg.msg_iovlen = 1;
  msg.msg_control = control.data();
  msg.msg_controllen = control.size();
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
  if (::sendmsg(socket, &msg, MSG_NOSIGNAL) != 1) throw SystemError("sendmsg: " + errno_text());
}

int receive_fd(int socket) {
  char byte = 0;
  iovec io{&byte, 1};
  alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof(int))> control{};
  msghdr msg{};
  msg.msg_iov = &io;
  msg.msg_iovlen = 1;
  msg.msg_control = control.data();
  msg.msg_controllen = control.size();
  if (::recvmsg(socket, &msg, MSG_CMSG_CLOEXEC) != 1) throw SystemError("recvmsg: " + errno_text());
  const cmsghdr* c = CMSG_FIRSTHDR(&msg);
  if (c == nullptr || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
    throw SystemError("recvmsg: no descriptor came");
  int fd = -1;
  std::memcpy(&fd, CMSG_DATA(c), sizeof(int));
  return fd;
}

}  // namespace

int share_descriptor(MPI_Comm group, int fd, const std::string& what) {
  int rank = 0;
  int ranks = 1;
  PLESHARD_MPI_CHECK(MPI_Comm_rank(group, &rank));
  PLESHARD_MPI_CHECK(MPI_Comm_size(group, &ranks));
  if (ranks == 1) return fd;
  // The name: a leading NUL (the abstract namespace), then the maker's pid and a random tag.
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  Socket listener;
  collective_try(group, [&] {
    if (rank != 0) return;
    const std::string name = "pleshard-fd-" + std::to_string(::getpid()) + "-" + std::to_string(std::random_device{}());
    std::memcpy(address.sun_path + 1, name.data(), name.size());
    listener.fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listener.fd < 0 || ::bind(listener.fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(listener.fd, ranks) != 0)
      throw InputError(what + ": cannot listen on a Unix socket to pass its descriptor (" + errno_text() + ")");
  });
  watched_bcast(&address, sizeof address, MPI_BYTE, 0, group, what + ": where its descriptor is passed");
  int got = fd;
  collective_try(group, [&] {
    if (rank == 0) {
      for (int peer = 1; peer < ranks; ++peer) {
        wait_for(listener.fd, POLLIN, what);
        Socket connection{::accept4(listener.fd, nullptr, nullptr, SOCK_CLOEXEC)};
        if (connection.fd < 0) throw InputError(what + ": accept: " + errno_text());
        send_fd(connection.fd, fd);
      }
      return;
    }
    Socket connection{::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)};
    if (connection.fd < 0 || ::connect(connection.fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0)
      throw InputError(what + ": cannot reach the socket that passes its descriptor (" + errno_text() +
                       "): the ranks of a node must share a network namespace");
    wait_for(connection.fd, POLLIN, what);
    got = receive_fd(connection.fd);
  });
  return got;
}

}  // namespace pleshard
