"""Prints NumPy's SeedSequence states, PCG64 outputs and int64 integers() draws for
test_numpy_random, one case a line of whitespace-separated integers:

  state SEED N w_0 .. w_{N-1}          SeedSequence(SEED).generate_state(N, np.uint64)
  raw SEED N v_0 .. v_{N-1}            default_rng(SEED).bit_generator.random_raw(N)
  draws SEED CALLS (LOW HIGH COUNT v_0 .. v_{COUNT-1}) x CALLS
                                       CALLS integers(LOW, HIGH, size=COUNT, dtype=np.int64)
                                       in turn on one default_rng(SEED)

Prints "skip REASON" when NumPy cannot be imported.
"""
import random
import sys

try:
    import numpy as np
except ImportError as error:
    print(f"skip numpy cannot be imported by {sys.executable}: {error}")
    sys.exit(0)

SEEDS = [0, 1, 2, 42, 12345, 2**31 - 1, 2**32 - 1, 2**32, 2**32 + 7, 2**40 + 3, 2**63 + 12345, 2**64 - 1]
SEEDS += [10007 * layer for layer in (1, 2, 3, 5, 14, 27, 42, 60, 61, 100)]

I64_MIN, I64_MAX = -(2**63), 2**63 - 1
# (low, high): one-value ranges, the 32-bit path (including ranges of 2^31 + 1 values, where
# half the words are rejected), exactly 2^32 values, the 64-bit path (2^63 + 1 values reject
# half the words too) and the widest int64 range.
RANGES = [(0, 1), (7, 8), (0, 2), (0, 3), (0, 7), (0, 100), (-5, 5), (0, 1000), (0, 99092),
          (0, 2**31 + 1), (-(2**30), 2**30 + 1), (0, 2**31), (0, 2**32 - 1), (0, 2**32),
          (-(2**31), 2**31), (0, 2**32 + 1), (5, 2**32 + 6), (0, 2**33), (0, 46539438283891),
          (-(10**12), 10**12), (0, 2**62), (0, 2**62 + 12345), (-(2**62), 2**62 + 1),
          (0, I64_MAX), (I64_MIN, I64_MAX), (I64_MIN, I64_MIN + 3)]

for seed in SEEDS:
    words = np.random.SeedSequence(seed).generate_state(8, np.uint64)
    print("state", seed, len(words), *[int(w) for w in words])
    raw = np.random.default_rng(seed).bit_generator.random_raw(9)
    print("raw", seed, len(raw), *[int(v) for v in raw])
    for low, high in RANGES:
        for count in (1, 5):
            values = np.random.default_rng(seed).integers(low, high, size=count, dtype=np.int64)
            print("draws", seed, 1, low, high, count, *[int(v) for v in values])

# Several calls on one generator: a 32-bit draw may leave half a word kept for the next.
chooser = random.Random(2024)
for seed in SEEDS:
    generator = np.random.default_rng(seed)
    line = ["draws", seed, 6]
    for _ in range(6):
        low, high = chooser.choice(RANGES)
        count = chooser.choice((1, 2, 3, 7))
        values = generator.integers(low, high, size=count, dtype=np.int64)
        line += [low, high, count, *[int(v) for v in values]]
    print(*line)
