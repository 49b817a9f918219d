#pragma once
// Bit-exact n-gram hashing of every model family (Qwen4Exp's PLE, DeepSeek's Engram), one
// core shared by the host and CUDA kernels; the families differ only in their parameters.
// All arithmetic is 64-bit with wrap-around: products and XORs are done on uint64_t and
// reinterpreted as int64_t, which is what signed wrap-around would give.

#include <cstdint>

#include "kernels/common/host_device.hpp"
#include "kernels/common/id_tally.hpp"
#include "kernels/common/padded_block.hpp"

namespace pleshard::kernels {

inline constexpr int k_hash_max_ngram_size = 16;
inline constexpr int k_hash_max_heads = 128;

inline constexpr std::uint64_t k_splitmix_gamma = 0x9E3779B97F4A7C15ull;

PLESHARD_HD constexpr std::uint64_t splitmix64(std::uint64_t v) {
  v += k_splitmix_gamma;
  v = (v ^ (v >> 30)) * 0xBF58476D1CE4E5B9ull;
  v = (v ^ (v >> 27)) * 0x94D049BB133111EBull;
  return v ^ (v >> 31);
}

// 128-bit products: a GNU extension that g++ and nvcc both provide.
__extension__ using uint128_t = unsigned __int128;

PLESHARD_HD constexpr std::uint64_t mul_mod(std::uint64_t a, std::uint64_t b, std::uint64_t m) {
  return static_cast<std::uint64_t>(static_cast<uint128_t>(a) * b % m);
}

PLESHARD_HD constexpr std::uint64_t pow_mod(std::uint64_t base, std::uint64_t exponent, std::uint64_t m) {
  std::uint64_t result = 1 % m;
  base %= m;
  while (exponent != 0) {
    if (exponent & 1u) result = mul_mod(result, base, m);
    base = mul_mod(base, base, m);
    exponent >>= 1;
  }
  return result;
}

// Deterministic Miller–Rabin for every 64-bit n: trial division by the primes up to 37,
// then the seven bases of Jim Sinclair's set, which have no common strong pseudoprime < 2^64.
PLESHARD_HD constexpr bool is_prime_u64(std::uint64_t n) {
  if (n < 2) return false;
  constexpr std::uint64_t small[] = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37};
  for (std::uint64_t p : small) {
    if (n % p == 0) return n == p;
  }
  std::uint64_t d = n - 1;
  int shifts = 0;
  while ((d & 1u) == 0) {
    d >>= 1;
    ++shifts;
  }
  constexpr std::uint64_t bases[] = {2, 325, 9375, 28178, 450775, 9780504, 1795265022};
  for (std::uint64_t a : bases) {
    if (a % n == 0) continue;
    std::uint64_t x = pow_mod(a, d, n);
    if (x == 1 || x == n - 1) continue;
    bool composite = true;
    for (int i = 1; i < shifts; ++i) {
      x = mul_mod(x, x, n);
      if (x == n - 1) {
        composite = false;
        break;
      }
    }
    if (composite) return false;
  }
  return true;
}

// Smallest prime strictly greater than p (p < the largest 64-bit prime).
PLESHARD_HD constexpr std::uint64_t next_prime_above(std::uint64_t p) {
  std::uint64_t candidate = p + 1;
  if (candidate <= 2) return 2;
  if ((candidate & 1u) == 0) ++candidate;
  while (!is_prime_u64(candidate)) candidate += 2;
  return candidate;
}

// High 64 bits of a 64x64-bit product.
PLESHARD_HD inline std::uint64_t mul_high(std::uint64_t a, std::uint64_t b) {
#if defined(__CUDA_ARCH__)
  return __umul64hi(a, b);
#else
  return static_cast<std::uint64_t>((static_cast<uint128_t>(a) * b) >> 64);
#endif
}

// x mod d without a 64-bit division (slow on GPUs and CPUs alike), for 1 <= d <= 2^63:
// with reciprocal = floor((2^64 - 1) / d), mul_high(x, reciprocal) is floor(x / d) or one
// less, so one conditional subtraction finishes the remainder.
PLESHARD_HD constexpr std::uint64_t modulus_reciprocal(std::uint64_t d) { return ~0ull / d; }

PLESHARD_HD inline std::uint64_t mod_u64(std::uint64_t x, std::uint64_t d, std::uint64_t reciprocal) {
  const std::uint64_t r = x - mul_high(x, reciprocal) * d;
  return r >= d ? r - d : r;
}

// Non-negative remainder of a signed value, like Python's % for a positive modulus.
PLESHARD_HD inline std::int64_t floor_mod(std::int64_t a, std::uint64_t d, std::uint64_t reciprocal) {
  if (a >= 0) return static_cast<std::int64_t>(mod_u64(static_cast<std::uint64_t>(a), d, reciprocal));
  // |a| as unsigned is exact even for INT64_MIN.
  const std::uint64_t r = mod_u64(0 - static_cast<std::uint64_t>(a), d, reciprocal);
  return static_cast<std::int64_t>(r == 0 ? 0 : d - r);
}

// A context entry for a position before the request's first token: a fresh request's
// context, or the older part of one that began fewer than N-1 tokens before its chunk.
inline constexpr std::int64_t k_before_request = -1;
// NgramFill::blocking_token of a family whose tokens never block.
inline constexpr std::int64_t k_no_blocking_token = -2;

// What a family's hashing does where it cannot see a token: walking from the token (shift
// 0) to its predecessors, a position before the request, or a token equal to
// `blocking_token` at shift >= `block_from`, blocks it and every older one, which hash as
// `value` (in the token map's domain). Qwen4Exp: EOS blocks from shift 1 and fills with EOS;
// Engram: a dead token blocks from shift 0 and the pad id fills.
struct NgramFill {
  std::int64_t value = 0;
  std::int64_t blocking_token = k_no_blocking_token;
  int block_from = 1;
};

// Everything a kernel needs to hash one table; small enough to pass by value.
struct NgramHashParams {
  int ngram_size = 0;       // N: orders 2..N are hashed
  int heads_per_ngram = 0;  // K: heads per order; H = (N - 1) * K
  NgramFill fill;
  // The compressed id of each token, hashed in its place; null: tokens hash as themselves.
  // In the memory of the processor that hashes (host or device).
  const std::int64_t* token_map = nullptr;
  std::int64_t multipliers[k_hash_max_ngram_size] = {};
  std::int64_t head_sizes[k_hash_max_heads] = {};
  std::int64_t head_offsets[k_hash_max_heads] = {};
  std::uint64_t head_reciprocals[k_hash_max_heads] = {};  // modulus_reciprocal(head_sizes[h])

  [[nodiscard]] PLESHARD_HD constexpr int total_heads() const { return (ngram_size - 1) * heads_per_ngram; }
};

// A batch as device or host pointers: flat tokens, request boundaries (num_requests + 1
// entries) and one context row of N-1 tokens per request, oldest first.
struct NgramBatchView {
  const std::int64_t* tokens = nullptr;
  std::int64_t num_tokens = 0;
  const std::int64_t* query_start_loc = nullptr;
  std::int64_t num_requests = 0;
  const std::int64_t* context = nullptr;
};

// Request owning flat token t: the last r with query_start_loc[r] <= t (empty requests
// share a boundary with the next one and are skipped).
PLESHARD_HD inline std::int64_t request_of_token(const NgramBatchView& batch, std::int64_t t) {
  std::int64_t lo = 0;
  std::int64_t hi = batch.num_requests;  // invariant: qsl[lo] <= t < qsl[hi]
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (batch.query_start_loc[mid] <= t) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// Walks flat token t and its predecessors (shift k = 0, 1, ..., shifts - 1), mixing each one's
// value into the n-gram hash, and calls visit(k, mix) after each: mix then covers the n-gram
// of order k + 1. Predecessors come from the request's own tokens, then from its context
// row; NgramFill says which positions are blocked. The one walk of every hashing entry.
template <typename Visit>
PLESHARD_HD inline void walk_ngram_mix(const NgramHashParams& params, const NgramBatchView& batch, std::int64_t t,
                                       int shifts, Visit&& visit) {
  const int n_max = params.ngram_size;
  const std::int64_t r = request_of_token(batch, t);
  const std::int64_t begin = batch.query_start_loc[r];
  const std::int64_t* context = batch.context + r * (n_max - 1);

  std::uint64_t mix = 0;
  bool blocked = false;
  for (int k = 0; k < shifts; ++k) {
    const std::int64_t source = t - k;
    const std::int64_t token = source >= begin ? batch.tokens[source] : context[(n_max - 1) + (source - begin)];
    if (token == k_before_request || (k >= params.fill.block_from && token == params.fill.blocking_token))
      blocked = true;
    const std::int64_t value = blocked                       ? params.fill.value
                               : params.token_map != nullptr ? params.token_map[token]
                                                             : token;
    mix ^= static_cast<std::uint64_t>(value) * static_cast<std::uint64_t>(params.multipliers[k]);
    visit(k, mix);
  }
}

// Head h's id of an n-gram hash `mix`.
PLESHARD_HD inline std::int64_t head_id(const NgramHashParams& params, int h, std::uint64_t mix) {
  return floor_mod(static_cast<std::int64_t>(mix), static_cast<std::uint64_t>(params.head_sizes[h]),
                   params.head_reciprocals[h]) +
         params.head_offsets[h];
}

// The H ids of flat token t, written to ids[0..H): heads (k - 1) K .. k K - 1 hash the
// n-gram of order k + 1.
PLESHARD_HD inline void ngram_ids_of_token(const NgramHashParams& params, const NgramBatchView& batch, std::int64_t t,
                                           std::int64_t* ids) {
  walk_ngram_mix(params, batch, t, params.ngram_size, [&](int k, std::uint64_t mix) {
    if (k == 0) return;
    const int first_head = (k - 1) * params.heads_per_ngram;
    for (int h = first_head; h < first_head + params.heads_per_ngram; ++h) ids[h] = head_id(params, h, mix);
  });
}

// ids[h] of ngram_ids_of_token alone: the walk stops at head h's order (a kernel that
// needs one id per thread, such as the decode that hashes its own keys).
PLESHARD_HD inline std::int64_t ngram_id_of_token(const NgramHashParams& params, const NgramBatchView& batch,
                                                  std::int64_t t, int h) {
  std::uint64_t last = 0;
  walk_ngram_mix(params, batch, t, h / params.heads_per_ngram + 2, [&](int, std::uint64_t mix) { last = mix; });
  return head_id(params, h, last);
}

// A step's tokens in `slots` blocks of equal size, as the engine packs them: slot s holds
// one DP rank's batch padded to `slot_tokens` tokens (the padding tokens form one extra
// request), so an ETP group's batches are gathered by one fixed-size all-gather and hashed
// where they land. A block is, in int64: tokens [slot_tokens], query_start_loc
// [slot_tokens + 2] (room for slot_tokens + 1 requests) and contexts [(slot_tokens + 1) x (N-1)].
struct SlotBatchView {
  const std::int64_t* blocks = nullptr;
  int slots = 0;
  std::int64_t slot_tokens = 0;
  int context_width = 0;  // N - 1

  [[nodiscard]] PLESHARD_HD static constexpr std::int64_t block_size(std::int64_t slot_tokens, int context_width) {
    return slot_tokens + (slot_tokens + 2) + (slot_tokens + 1) * context_width;
  }
  // One slot's block holding `tokens` tokens in `requests` non-empty requests, as runs of
  // data and padding: the tokens then zeros, the boundaries of the requests and of the
  // padding request's start then slot_tokens (empty requests), the requests' contexts then
  // zeros (the padding request's and the empty ones').
  [[nodiscard]] PLESHARD_HD static constexpr PaddedBlock layout(std::int64_t slot_tokens, int context_width,
                                                                std::int64_t tokens, std::int64_t requests) {
    PaddedBlock b;
    b.runs = 3;
    b.words[0] = slot_tokens;
    b.used[0] = tokens;
    b.words[1] = slot_tokens + 2;
    b.used[1] = requests + 1;
    b.fill[1] = slot_tokens;
    b.words[2] = (slot_tokens + 1) * context_width;
    b.used[2] = requests * context_width;
    return b;
  }
  [[nodiscard]] PLESHARD_HD std::int64_t tokens() const { return slots * slot_tokens; }
  [[nodiscard]] PLESHARD_HD NgramBatchView slot(std::int64_t s) const {
    const std::int64_t* b = blocks + s * block_size(slot_tokens, context_width);
    return {b, slot_tokens, b + slot_tokens, slot_tokens + 1, b + 2 * slot_tokens + 2};
  }
};

// The H ids of token t (0 <= t < batch.tokens()) of a slot batch, slot by slot.
PLESHARD_HD inline void ngram_ids_of_slot_token(const NgramHashParams& params, const SlotBatchView& batch,
                                                std::int64_t t, std::int64_t* ids) {
  const std::int64_t s = t / batch.slot_tokens;
  ngram_ids_of_token(params, batch.slot(s), t - s * batch.slot_tokens, ids);
}

// Head h's id of token t of a slot batch.
PLESHARD_HD inline std::int64_t ngram_id_of_slot_token(const NgramHashParams& params, const SlotBatchView& batch,
                                                       std::int64_t t, int h) {
  const std::int64_t s = t / batch.slot_tokens;
  return ngram_id_of_token(params, batch.slot(s), t - s * batch.slot_tokens, h);
}

// A step's hashing handed to the kernel that consumes its ids: layer d's ids are those of
// params[d] for the tokens of `batch`, entry i being token i / heads, head i % heads, and
// their place is ids + d x batch.tokens() x heads. A decode that reads the tables in place
// hashes its own keys from this instead of reading them from `ids`; whichever hashes counts
// the ids into `tally` where it is given (peer reads: the lookups outside my part).
struct StepHash {
  const NgramHashParams* params = nullptr;  // one per layer, device-accessible
  int layers = 0;
  int heads = 0;
  SlotBatchView batch;
  std::int64_t* ids = nullptr;
  IdTally tally;
};

}  // namespace pleshard::kernels
