#include "io/file_reads.hpp"

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/enum_names.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "core/option_names.hpp"
#include "core/parallel.hpp"

#if PLESHARD_HAVE_URING
#include <liburing.h>
#endif

namespace pleshard {

namespace {

constexpr EnumNames<PageCache, 2> k_page_cache{{{PageCache::use, "cached"}, {PageCache::bypass, "direct"}}};

void read_with_threads(std::span<const FileRead> reads, bool past_cache) {
  parallel_for(reads.size(), k_read_threads, 4, [&](std::size_t i) {
    if (past_cache) {
      reads[i].file->read_exact_past_cache(reads[i].offset, reads[i].out);
    } else {
      reads[i].file->read_exact(reads[i].offset, reads[i].out);
    }
  });
}

bool direct_loads_wanted() {
  const char* v = std::getenv("PLESHARD_DIRECT_LOADS");
  return v == nullptr || std::string(v) != "0";
}

bool uring_wanted() {
  const char* v = std::getenv("PLESHARD_IO_URING");
  return v == nullptr || std::string(v) != "0";
}

#if PLESHARD_HAVE_URING

constexpr std::uint64_t k_block = k_direct_block_bytes;

std::atomic<bool> g_refused{false};  // io_uring refused once: every thread reads with pread

// One thread's ring and its registered bounce blocks, one per read in flight.
class Ring {
 public:
  static Ring* mine() {
    thread_local std::unique_ptr<Ring> ring;
    thread_local bool tried = false;
    if (!tried && !g_refused) {
      tried = true;
      auto r = std::make_unique<Ring>();
      if (r->open()) {
        ring = std::move(r);
      } else if (!g_refused.exchange(true)) {
        log_info("io_uring unavailable (" + r->why_ + "): disk reads from threads of pread");
      }
    }
    return ring.get();
  }

  Ring() = default;
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;
  ~Ring() {
    if (open_) io_uring_queue_exit(&ring_);
    std::free(bounce_);
  }

  // Past the page cache where the files allow it (only such reads come to the ring).
  void read(std::span<const FileRead> reads);

 private:
  // A read, or what is left of one, in flight under a tag (its bounce block's index).
  struct Piece {
    std::size_t read = 0;
    std::uint64_t done = 0;     // bytes of the read already in place
    std::uint64_t aligned = 0;  // direct: the block-aligned file offset read into the bounce block
    bool direct = false;
  };

  bool open() {
    const int status = io_uring_queue_init(k_reads_in_flight, &ring_, 0);
    if (status < 0) {
      why_ = std::strerror(-status);
      return false;
    }
    open_ = true;
    bounce_ = static_cast<std::uint8_t*>(std::aligned_alloc(k_block, k_reads_in_flight * k_bounce_block_bytes));
    if (bounce_ == nullptr) {
      why_ = "no memory for its bounce blocks";
      return false;
    }
    std::vector<iovec> blocks(k_reads_in_flight);
    for (unsigned t = 0; t < k_reads_in_flight; ++t)
      blocks[t] = {bounce_ + t * k_bounce_block_bytes, k_bounce_block_bytes};
    const int registered = io_uring_register_buffers(&ring_, blocks.data(), k_reads_in_flight);
    if (registered < 0) {
      why_ = std::string("registering buffers: ") + std::strerror(-registered);
      return false;
    }
    return true;
  }

  void submit(std::span<const FileRead> reads, unsigned tag) {
    Piece& p = pieces_[tag];
    const FileRead& r = reads[p.read];
    const std::uint64_t offset = r.offset + p.done;
    const std::uint64_t bytes = r.out.size() - p.done;
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    if (sqe == nullptr) throw SystemError("io_uring: no submission entry free");
    p.aligned = offset & ~(k_block - 1);
    const std::uint64_t span = ((offset + bytes + k_block - 1) & ~(k_block - 1)) - p.aligned;
    p.direct = r.file->direct_fd() >= 0 && span <= k_bounce_block_bytes;
    if (p.direct) {
      io_uring_prep_read_fixed(sqe, r.file->direct_fd(), bounce_ + tag * k_bounce_block_bytes,
                               static_cast<unsigned>(span), p.aligned, static_cast<int>(tag));
    } else {
      // At most what a 32-bit length holds; the kernel gives at most 0x7ffff000 bytes of it,
      // and complete() asks for the rest.
      io_uring_prep_read(sqe, r.file->fd(), r.out.data() + p.done,
                         static_cast<unsigned>(std::min<std::uint64_t>(bytes, 0xfffff000u)), offset);
    }
    io_uring_sqe_set_data64(sqe, tag);
  }

  // Takes a completion: true when its read is whole; false when the rest must be asked for.
  bool complete(std::span<const FileRead> reads, unsigned tag, int result) {
    Piece& p = pieces_[tag];
    const FileRead& r = reads[p.read];
    const std::uint64_t offset = r.offset + p.done;
    const std::uint64_t bytes = r.out.size() - p.done;
    if (result == -EINTR || result == -EAGAIN) return false;
    if (result == -EINVAL && p.direct) {  // an alignment the device does not take: the page cache
      r.file->refuse_direct();
      return false;
    }
    if (result < 0)
      throw InputError(r.file->path() + ": read error at byte " + std::to_string(offset) + ": " +
                       std::strerror(-result));
    const auto got = static_cast<std::uint64_t>(result);
    std::uint64_t placed = 0;
    if (p.direct) {
      const std::uint64_t skip = offset - p.aligned;
      placed = got > skip ? std::min(got - skip, bytes) : 0;
      std::memcpy(r.out.data() + p.done, bounce_ + tag * k_bounce_block_bytes + skip, placed);
    } else {
      placed = got;
    }
    if (placed == 0)
      throw InputError(r.file->path() + ": file ends at byte " + std::to_string(offset) + ", expected " +
                       std::to_string(bytes) + " more bytes (truncated?)");
    p.done += placed;
    return p.done == r.out.size();
  }

  io_uring ring_{};
  bool open_ = false;
  std::uint8_t* bounce_ = nullptr;
  Piece pieces_[k_reads_in_flight];
  std::string why_;
};

void Ring::read(std::span<const FileRead> reads) {
  std::vector<unsigned> free_tags;
  for (unsigned t = k_reads_in_flight; t-- > 0;) free_tags.push_back(t);
  std::size_t next = 0;
  unsigned in_flight = 0;
  std::string failure;  // the first error: no new reads, the ones in flight drained
  while (true) {
    while (failure.empty() && next < reads.size() && !free_tags.empty()) {
      if (reads[next].out.empty()) {
        ++next;
        continue;
      }
      const unsigned tag = free_tags.back();
      free_tags.pop_back();
      pieces_[tag] = {next++, 0, 0, false};
      submit(reads, tag);
      ++in_flight;
    }
    if (in_flight == 0) break;
    const int submitted = io_uring_submit_and_wait(&ring_, 1);
    if (submitted < 0 && submitted != -EINTR)
      throw SystemError(std::string("io_uring_submit: ") + std::strerror(-submitted));
    io_uring_cqe* cqe = nullptr;
    unsigned head = 0;
    unsigned seen = 0;
    io_uring_for_each_cqe(&ring_, head, cqe) {
      ++seen;
      const auto tag = static_cast<unsigned>(io_uring_cqe_get_data64(cqe));
      bool whole = true;
      if (failure.empty()) {
        try {
          whole = complete(reads, tag, cqe->res);
        } catch (const Error& e) {
          failure = e.what();
        }
      }
      if (whole || !failure.empty()) {
        free_tags.push_back(tag);
        --in_flight;
      } else {
        submit(reads, tag);  // the rest of the read, under the same tag
      }
    }
    io_uring_cq_advance(&ring_, seen);
  }
  if (!failure.empty()) throw InputError(failure);
}

#endif

}  // namespace

const char* to_string(PageCache cache) { return name_of(k_page_cache, cache); }

PageCache parse_page_cache(std::string_view name) { return parse_value(k_page_cache, name, Option::disk_reads); }

void read_files(std::span<const FileRead> reads, ReadPath path, PageCache cache) {
  if (reads.empty()) return;
  const bool bypass = cache == PageCache::bypass;
#if PLESHARD_HAVE_URING
  if (path == ReadPath::automatic && bypass && uring_wanted())
    if (Ring* ring = Ring::mine(); ring != nullptr) {
      ring->read(reads);
      return;
    }
#else
  (void)path;
#endif
  read_with_threads(reads, bypass && (path == ReadPath::automatic || direct_loads_wanted()));
}

const char* file_read_path() {
#if PLESHARD_HAVE_URING
  if (uring_wanted() && Ring::mine() != nullptr) return "io_uring";
#endif
  return "pread threads";
}

}  // namespace pleshard
