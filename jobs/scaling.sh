#!/usr/bin/env bash
# Strong or weak scaling of `pleshard run`, repeated runs per rank count, CSV with speedup,
# efficiency and provenance written as each rank count completes (a failed one marked, the
# study resumable), and plots: jobs/scaling.py under Debian's Python (which has
# python3-matplotlib; a pyenv or venv python3 first on PATH often does not).
#   jobs/scaling.sh -c CHECKPOINT [-m strong|weak] [-r "1 2 4"] [-n REPEATS] [-q REQUESTS | -s N]
#                   [-t TP] [-e ETP_PER_TP|all] [-g STORAGE | -p PLACEMENT] [-x "MORE RUN ARGS"]... [-o OUT_PREFIX]
#                   [-b BUILD_DIR] [--resume] [-- RUN ARG...]
# jobs/scaling.sh -h says more. PYTHON overrides the interpreter.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
python=${PYTHON:-}
if [ -z "$python" ]; then
  python=python3
  [ -x /usr/bin/python3 ] && python=/usr/bin/python3
fi
exec "$python" "$here/scaling.py" "$@"
