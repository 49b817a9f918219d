"""A rank stopped (SIGSTOP, as a frozen node would be) while the ranks make a pleshard.Engine
together ends the job on every rank within about collective_timeout seconds, with one message
naming what the others waited for, instead of holding them for ever.
    python3 test_stall.py MPIEXEC CHECKPOINT CONFIG   (runs itself under MPIEXEC -n 2)"""
import os
import signal
import subprocess
import sys
import time

if sys.argv[1] == "--ranks":
    from mpi4py import MPI

    import pleshard

    checkpoint, config_path = sys.argv[2], sys.argv[3]
    if MPI.COMM_WORLD.Get_rank() == 1:
        os.kill(os.getpid(), signal.SIGSTOP)
    pleshard.Engine(checkpoint=checkpoint, config=config_path, comm=MPI.COMM_WORLD, collective_timeout=2)
    print("an Engine was made beside a stopped rank", flush=True)
    sys.exit(0)

mpiexec, checkpoint, config_path = sys.argv[1:4]
start = time.monotonic()
# A session of its own, so that a job that hangs is ended whole, its stopped rank included.
job = subprocess.Popen([mpiexec, "-n", "2", "--oversubscribe", sys.executable, __file__, "--ranks", checkpoint,
                        config_path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       start_new_session=True)
try:
    output, _ = job.communicate(timeout=60)
except subprocess.TimeoutExpired:
    os.killpg(job.pid, signal.SIGKILL)
    job.communicate()
    print("FAIL: the job still waited 60 s after rank 1 stopped")
    sys.exit(1)
seconds = time.monotonic() - start
done = job
failed = []
if done.returncode == 0:
    failed.append("the job exited 0")
if "no progress in 2 s" not in output or "making an Engine" not in output:
    failed.append("no message naming the wait")
if seconds > 30:
    failed.append(f"it ended {seconds:.0f} s after its start, with a limit of 2 s")
if failed:
    print("FAIL: " + "; ".join(failed) + "\n" + output)
    sys.exit(1)
print(f"stall: a stopped rank ended the Engine's making in {seconds:.1f} s")
