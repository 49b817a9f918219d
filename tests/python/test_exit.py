"""The interpreter exits cleanly while daemon threads are inside the engine: a script whose
main thread returns (here with sys.exit(3)) while another thread steps, reports or makes an
engine ends with the script's exit code, no abort and no core — what a batch scheduler takes
for the job's outcome. Each case runs in its own interpreter, several times (the thread is
caught at a different point each time).
    test_exit.py CHECKPOINT CONFIG"""
import subprocess
import sys

from support import check

checkpoint, config_path = sys.argv[1], sys.argv[2]

PROLOGUE = """
import sys, threading
import numpy as np
import pleshard
checkpoint, config_path = sys.argv[1], sys.argv[2]
engine = pleshard.Engine(checkpoint=checkpoint, config=config_path, step_tokens=1 << 16)
tokens = np.arange(1 << 16, dtype=np.int64) % 1000
inside = threading.Event()
"""
EPILOGUE = """
for _ in range(THREADS):
    threading.Thread(target=loop, daemon=True).start()
inside.wait()
print("main: done", flush=True)
sys.exit(3)
"""
CASES = {
    # A step of 65,536 tokens takes tens of milliseconds: the exit comes during one.
    "forward": """
def loop():
    while True:
        inside.set()
        engine.forward(tokens, [0, len(tokens)])
""",
    "report and wait": """
def loop():
    while True:
        engine.forward(tokens[:64], [0, 64])
        inside.set()
        engine.wait()
        engine.report()
""",
    "making engines": """
def loop():
    while True:
        inside.set()
        pleshard.Engine(checkpoint=checkpoint, config=config_path).close()
""",
}

for name, body in CASES.items():
    for threads in (1, 2):
        script = PROLOGUE + body + EPILOGUE.replace("THREADS", str(threads))
        for attempt in range(3):
            r = subprocess.run([sys.executable, "-c", script, checkpoint, config_path], capture_output=True, text=True,
                               timeout=120)
            check(r.returncode == 3 and "main: done" in r.stdout and "terminate" not in r.stderr,
                  f"{name}, {threads} daemon threads, run {attempt + 1}: exit {r.returncode}, expected 3 "
                  f"(the script's own); stderr:\n{r.stderr[-2000:]}")
    print(f"exit while daemon threads are {name}: the script's exit code, no abort")
