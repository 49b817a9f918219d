#pragma once
// The consumer's stand-in for a decoder shard's use of the embeddings: a checksum of 16-bit
// values computed on the GPU, on the shard's own stream.

#include <cstdint>

#include <cuda_runtime_api.h>

// sum over i of (i + 1) * values[i], modulo 2^64, into *out (device memory).
void checksum_on_device(const std::uint16_t* values, std::int64_t count, std::uint64_t* out, cudaStream_t stream);
