"""Plain tmux control clients, no headspace: one per session of the server it runs in.

    python3 benchmarks/raw_control_clients.py [clean|hup]

For the soak (``soak.py --no-headspace --second-command "exec python3
benchmarks/raw_control_clients.py clean"``): it stands in for a second
headspace, started in a session that is killed every 15 s, with nothing of
headspace's code in it: ``tmux -C attach-session -f ignore-size`` per
session, output read and thrown away.  On SIGHUP (its session killed) it
detaches every client by closing its input (``clean``) or passes the hangup
to them (``hup``).  tmux 3.3a's server crashes under that soak too: the
crash is tmux's, reachable by any control-mode client (see docs/resilience.md).
Standard library only.
"""

import os
import signal
import subprocess
import sys
import threading
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else "clean"


def drain(proc: subprocess.Popen) -> None:
    while proc.stdout.read(65536):
        pass


def main() -> None:
    sessions = subprocess.run(["tmux", "list-sessions", "-F", "#{session_id}"], capture_output=True, text=True).stdout.split()
    clients = []
    for session in sessions:
        proc = subprocess.Popen(
            ["tmux", "-C", "attach-session", "-f", "ignore-size", "-t", session],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            start_new_session=True,
        )
        threading.Thread(target=drain, args=(proc,), daemon=True).start()
        clients.append(proc)

    def hangup(signum, frame) -> None:
        for proc in clients:
            if MODE == "clean":
                proc.stdin.close()
            else:
                proc.send_signal(signal.SIGHUP)
        for proc in clients:
            try:
                proc.wait(2)
            except subprocess.TimeoutExpired:
                proc.kill()
        os._exit(0)

    signal.signal(signal.SIGHUP, hangup)
    signal.signal(signal.SIGTERM, hangup)
    while True:
        time.sleep(1)


if __name__ == "__main__":
    main()
