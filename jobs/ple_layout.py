"""The hash layout of a PLE layer (docs/design.md section 2) in plain Python: layer d's n-gram
multipliers and the sizes and offsets of its heads' tables. Python integers are unbounded, so
64-bit wrap-around is applied explicitly. Used by the PyTorch baseline (torch_seed_flow.py)
and the writer of the golden `pleshard ids` outputs (tests/apps/data/make_golden.py)."""

MASK = (1 << 64) - 1


def splitmix64(v):
    v = (v + 0x9E3779B97F4A7C15) & MASK
    v = ((v ^ (v >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    v = ((v ^ (v >> 27)) * 0x94D049BB133111EB) & MASK
    return v ^ (v >> 31)


def is_prime(n):
    """Miller-Rabin with bases that decide every n below 2**64."""
    if n < 2:
        return False
    for p in (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37):
        if n % p == 0:
            return n == p
    d, s = n - 1, 0
    while d % 2 == 0:
        d, s = d // 2, s + 1
    for a in (2, 325, 9375, 28178, 450775, 9780504, 1795265022):
        if a % n == 0:
            continue
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def signed(v):
    v &= MASK
    return v - (1 << 64) if v >> 63 else v


def layout(vocab, ngram_size, heads_per_ngram, base, seed, d):
    """Layer d's multipliers (one per n-gram position, as unsigned 64-bit values), and its
    heads' table sizes (consecutive primes from `base`, the layers before d taking theirs
    first) and offsets."""
    heads = (ngram_size - 1) * heads_per_ngram
    half = max(1, ((2**63 - 1) // vocab) // 2)
    mults = [2 * (splitmix64(seed + 10007 * d + 0x9E3779B97F4A7C15 * (i + 1)) % half) + 1
             for i in range(ngram_size)]
    primes, c = [], base
    while len(primes) < (d + 1) * heads:
        if is_prime(c):
            primes.append(c)
        c += 1
    sizes = primes[d * heads:]
    offsets = [sum(sizes[:h]) for h in range(heads)]
    return mults, sizes, offsets
