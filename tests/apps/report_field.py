"""Prints one value of the last `pleshard run --json` report in a file, for the app tests:
    report_field.py FILE PATH
PATH names keys and array indexes with dots (`backend`, `cache.0.hits`); null prints as
"null", flags as "true"/"false"."""
import json
import sys

lines = [line for line in open(sys.argv[1]) if line.startswith("{")]
if not lines:
    sys.exit(f"report_field: {sys.argv[1]}: no JSON report")
value = json.loads(lines[-1])
for key in sys.argv[2].split("."):
    value = value[int(key)] if isinstance(value, list) else value[key]
print(json.dumps(value) if value is None or isinstance(value, bool) else value)
