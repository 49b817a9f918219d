"""Reading `pleshard run --json` reports by key name (docs/report.md documents them; older
reports named some keys otherwise), so every value is looked up by name where it is, at the
top or nested, and a key that is absent gives None rather than an error."""
import json
import re

# The step phases of the report, in the order the engine runs them.
PHASES = ["load", "gather", "hash", "fetch", "decode", "combine"]


def find_report(stdout):
    """The last JSON object printed that is a run report (or, failing that, any object)."""
    found = None
    for line in stdout.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict) and (found is None or value.get("job") == "run"):
            found = value
    return found


def scalars(report, prefix=""):
    """Every number, string and flag of the report as flat "a_b" keys (nested objects joined)."""
    out = {}
    for key, value in report.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(scalars(value, name + "_"))
        elif isinstance(value, (int, float, str, bool)) or value is None:
            out[name] = value
    return out


def value(report, *names):
    """The first of `names` found in the report, at its top or in a nested object; else None."""
    for name in names:
        if name in report:
            return report[name]
    for nested in report.values():
        if isinstance(nested, dict):
            found = value(nested, *names)
            if found is not None:
                return found
    return None


def number(report, *names):
    v = value(report, *names)
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def throughput(report):
    """Tokens per second of this run's work (None when it did nothing)."""
    tps = number(report, "tokens_per_s")
    if tps is not None or report.get("outcome") == "nothing_to_do":
        return tps
    tokens, seconds = number(report, "tokens_done", "tokens"), number(report, "wall_s", "seconds")
    return tokens / seconds if tokens and seconds else None


def phases(report):
    """Seconds per step phase (max over ranks), for the phases the report has."""
    out = {}
    for p in PHASES:
        s = number(report, f"phase_{p}_s", f"{p}_s", f"{p}_seconds")
        if s is not None:
            out[p] = s
    return out


# "<collective>_busbw" is in B/s; keys that carry their unit say which.
_BUSBW = [(re.compile(r"^(.*)_busbw_gb_s$"), 1.0), (re.compile(r"^(.*)_busbw_bytes_per_s$"), 1e-9),
          (re.compile(r"^(.*)_busbw(_b_s)?$"), 1e-9)]


def busbw_gb_s(report):
    """Each collective's bus bandwidth in GB/s (nccl-tests conventions), by collective name."""
    out = {}
    for key, v in scalars(report).items():
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            continue
        for pattern, scale in _BUSBW:
            m = pattern.match(key)
            if m:
                out[m.group(1)] = v * scale
                break
    for c in value(report, "collectives") or []:  # a list of objects, where the report has one
        if isinstance(c, dict) and "name" in c:
            bw = number(c, "busbw_gb_s")
            bw = bw if bw is not None else (number(c, "busbw_bytes_per_s", "busbw") or 0) * 1e-9
            out[str(c["name"]).replace(" ", "_")] = bw
    return out
