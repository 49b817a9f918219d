#!/usr/bin/env python3
"""Folds a JSONL token corpus into a smaller vocabulary (token t becomes t mod V), so that a
corpus tokenized for one model can drive another model's tables in benchmarks:

    python3 jobs/fold_corpus.py --vocab-size 129280 < corpus-a.tokens.jsonl > folded.jsonl

The n-gram statistics stay those of real text (repeats repeat), but the ids are not the
target model's tokenizer's: say "folded" beside any figure made with it."""
import argparse
import json
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vocab-size", type=int, required=True)
    args = parser.parse_args()
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        request["tokens"] = [t % args.vocab_size for t in request["tokens"]]
        sys.stdout.write(json.dumps(request, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
