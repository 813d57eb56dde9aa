import subprocess
import sys

# Start the helper service the tests need, detached so it outlives the run.
subprocess.Popen(
    [sys.executable, "-c", "import os, time; os.setsid(); time.sleep(600)"],
    start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
)
