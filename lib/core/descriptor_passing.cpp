#include "core/descriptor_passing.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <random>
#include <vector>

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

// One byte and room for one descriptor beside it: the message each side of a passing uses.
struct DescriptorMessage {
  char byte = 0;
  iovec io{&byte, 1};
  alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof(int))> control{};
  msghdr msg{};
  DescriptorMessage() {
    msg.msg_iov = &io;
    msg.msg_iovlen = 1;
    msg.msg_control = control.data();
    msg.msg_controllen = control.size();
  }
  DescriptorMessage(const DescriptorMessage&) = delete;  // msg points into it
  DescriptorMessage& operator=(const DescriptorMessage&) = delete;
};

void send_fd(int socket, int fd) {
  DescriptorMessage m;
  cmsghdr* c = CMSG_FIRSTHDR(&m.msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
  if (::sendmsg(socket, &m.msg, MSG_NOSIGNAL) != 1) throw SystemError("sendmsg: " + errno_text());
}

int receive_fd(int socket) {
  DescriptorMessage m;
  if (::recvmsg(socket, &m.msg, MSG_CMSG_CLOEXEC) != 1) throw SystemError("recvmsg: " + errno_text());
  const cmsghdr* c = CMSG_FIRSTHDR(&m.msg);
  if (c == nullptr || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
    throw SystemError("recvmsg: no descriptor came");
  int fd = -1;
  std::memcpy(&fd, CMSG_DATA(c), sizeof(int));
  return fd;
}

}  // namespace

std::vector<int> share_descriptors(MPI_Comm group, int fd, const std::string& what) {
  int rank = 0;
  int ranks = 1;
  PLESHARD_MPI_CHECK(MPI_Comm_rank(group, &rank));
  PLESHARD_MPI_CHECK(MPI_Comm_size(group, &ranks));
  const auto n = static_cast<std::size_t>(ranks);
  std::vector<int> got(n, -1);
  got[static_cast<std::size_t>(rank)] = fd;
  if (ranks == 1) return got;
  // A giver's name: a leading NUL (the abstract namespace), then its pid and a random tag;
  // sun_path[1] stays NUL for a rank that gives nothing.
  sockaddr_un mine{};
  mine.sun_family = AF_UNIX;
  Socket listener;
  collective_try(group, [&] {
    if (fd < 0) return;
    const std::string name = "pleshard-fd-" + std::to_string(::getpid()) + "-" + std::to_string(std::random_device{}());
    std::memcpy(mine.sun_path + 1, name.data(), name.size());
    listener.fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listener.fd < 0 || ::bind(listener.fd, reinterpret_cast<const sockaddr*>(&mine), sizeof mine) != 0 ||
        ::listen(listener.fd, ranks) != 0)
      throw InputError(what + ": cannot listen on a Unix socket to pass its descriptor (" + errno_text() + ")");
  });
  std::vector<sockaddr_un> names(n);
  watched_allgather(&mine, names.data(), sizeof mine, MPI_BYTE, group, what + ": where its descriptors are passed");
  const auto gives = [&](std::size_t r) { return names[r].sun_path[1] != '\0'; };
  std::vector<Socket> connections(n);
  try {
    collective_try(group, [&] {
      // Connect to every giver first: a connection waits in its listener's backlog (room for
      // every rank), so no rank waits on another's accept before it has connected.
      for (std::size_t r = 0; r < n; ++r) {
        if (r == static_cast<std::size_t>(rank) || !gives(r)) continue;
        connections[r].fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (connections[r].fd < 0 ||
            ::connect(connections[r].fd, reinterpret_cast<const sockaddr*>(&names[r]), sizeof names[r]) != 0)
          throw InputError(what + ": cannot reach the socket that passes rank " + std::to_string(r) +
                           "'s descriptor (" + errno_text() + "): the ranks of a node must share a network namespace");
      }
      if (fd >= 0) {
        for (int peer = 1; peer < ranks; ++peer) {
          wait_for(listener.fd, POLLIN, what);
          Socket connection{::accept4(listener.fd, nullptr, nullptr, SOCK_CLOEXEC)};
          if (connection.fd < 0) throw InputError(what + ": accept: " + errno_text());
          send_fd(connection.fd, fd);
        }
      }
      for (std::size_t r = 0; r < n; ++r) {
        if (connections[r].fd < 0) continue;
        wait_for(connections[r].fd, POLLIN, what);
        got[r] = receive_fd(connections[r].fd);
      }
    });
  } catch (...) {
    for (std::size_t r = 0; r < n; ++r)
      if (r != static_cast<std::size_t>(rank) && got[r] >= 0) ::close(got[r]);
    throw;
  }
  return got;
}

}  // namespace pleshard
