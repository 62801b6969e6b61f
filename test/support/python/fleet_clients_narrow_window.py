"""fleet_clients.py with python-socketio's connect window held open: once a namespace's CONNECT answer has
arrived, `connect()` waits 0.3 s more before it marks the client connected. A transport that closes right
after the answer then always closes inside the window in which the library wedges the client (see
`wedged` in fleet_clients.py), which otherwise takes a scheduling accident. Used by
test/resilience/faults/fleet-python.test.ts only.
"""
import os
import runpy
import sys
import time

import engineio

_create_event = engineio.Client.create_event


def _slow_event(self, *args, **kwargs):
    event = _create_event(self, *args, **kwargs)
    wait = event.wait

    def held(timeout=None):
        answered = wait(timeout)
        if answered:
            time.sleep(0.3)
        return answered

    event.wait = held
    return event


engineio.Client.create_event = _slow_event
sys.argv = [os.path.join(os.path.dirname(__file__), 'fleet_clients.py')]
runpy.run_path(sys.argv[0], run_name='__main__')
