"""Several outside clients of the hub in one process: python-socketio with its default transports
(long-polling, then the websocket upgrade) and its own reconnection, each keeping the last position of
its push streams and handing them over (`auth.resume`) at every reconnection, as the documented protocol
says (docs/hub.md#recovering-missed-pushes). Driven by test/resilience/faults/fleet-python.ts.

Usage: python fleet_clients.py   (commands on stdin, one JSON object per line)
  {"op": "open", "c": 0, "url": "http://acme.localhost:PORT", "token": "..."}   a new client number c
  {"op": "token", "c": 0, "token": "..."}     the client's fresh access token (used from its next
                                              connection on, and handed to the live one: refreshToken)
  {"op": "call", "c": 0, "id": 7, "method": "acceptCall", "args": [{...}]}
  {"op": "close", "c": 0}                     disconnects for good
  {"op": "exit"}

Prints one JSON object per line on stdout, each with the client number `c`:
  {"c": 0, "event": "connected", "transport": "polling"|"websocket"}
  {"c": 0, "event": "disconnected", "reason": "..."}
  {"c": 0, "event": "connect_error", "data": ...}
  {"c": 0, "event": "push", "name": "onNewCall", "data": {...}}     every push, pushStreams included
  {"c": 0, "event": "ack", "id": 7, "result": {...}}                 {"ok": false, "error": {...}} on a refusal;
                                                                    code "timeout" / "disconnected" when none came
  {"c": 0, "event": "closed"}
"""
import json
import socket
import sys
import threading

# Resolve *.localhost to the loopback address, as RFC 6761 and browsers do (many resolvers do not),
# so both transports send the tenant's host name in their Host header.
_getaddrinfo = socket.getaddrinfo


def _loopback_getaddrinfo(host, *args, **kwargs):
    if isinstance(host, str) and host.endswith('.localhost'):
        host = '127.0.0.1'
    return _getaddrinfo(host, *args, **kwargs)


socket.getaddrinfo = _loopback_getaddrinfo

import socketio  # noqa: E402  (after the resolver patch)

_out = threading.Lock()


def emit(**fields):
    line = json.dumps(fields)
    with _out:
        sys.stdout.write(line + '\n')
        sys.stdout.flush()


class FleetClient:
    def __init__(self, c, url, token):
        self.c = c
        self.url = url
        self.token = token
        self.positions = {}
        # The positions handed over at the last connection attempt (reported with `connected`).
        self.handed = []
        self.lock = threading.Lock()
        self.closing = False
        # Its own reconnection (python-socketio's defaults, a shorter first delay): the route it reconnects
        # through (a sticky balancer) leads to a node that serves.
        self.sio = socketio.Client(reconnection=True, reconnection_attempts=0, reconnection_delay=0.5,
                                   reconnection_delay_max=3, request_timeout=30)
        self.sio.on('*', self.on_push)
        self.sio.on('connect', self.on_connect)
        self.sio.on('disconnect', self.on_disconnect)
        self.sio.on('connect_error', self.on_connect_error)

    def auth(self):
        with self.lock:
            self.handed = list(self.positions.values())
            return {'token': self.token, 'resume': self.handed}

    def note(self, p):
        with self.lock:
            cur = self.positions.get(p['stream'])
            if cur is None or cur.get('epoch') != p.get('epoch') or p.get('seq', 0) > cur.get('seq', 0):
                self.positions[p['stream']] = dict(p)

    def on_push(self, event, data=None):
        if event == 'pushStreams':
            for p in data.get('positions', []):
                with self.lock:
                    self.positions[p['stream']] = dict(p)
        elif event == 'resyncRequired':
            with self.lock:
                self.positions[data['stream']] = dict(data['position'])
        elif isinstance(data, dict) and isinstance(data.get('pos'), dict):
            self.note(data['pos'])
        emit(c=self.c, event='push', name=event, data=data)

    def on_connect(self):
        emit(c=self.c, event='connected', transport=self.sio.transport(), resume=self.handed)

    def on_disconnect(self, reason=None):
        emit(c=self.c, event='disconnected', reason=str(reason))
        # The server ended the session on purpose (sessionEnded: an expired token): python-socketio does
        # not come back by itself then; this client does, with its current token.
        if reason == self.sio.reason.SERVER_DISCONNECT and not self.closing:
            threading.Thread(target=self.run, args=(0.3,), daemon=True).start()

    def on_connect_error(self, data=None):
        emit(c=self.c, event='connect_error', data=data if isinstance(data, (dict, str)) else str(data))

    def start(self):
        threading.Thread(target=self.run, daemon=True).start()

    def run(self, delay=0):
        if delay:
            self.sio.sleep(delay)
        while not self.closing and not self.sio.connected:
            try:
                self.sio.connect(self.url, socketio_path='/hubs/mobile', auth=self.auth, wait_timeout=30)
                return
            except socketio.exceptions.ConnectionError as e:
                emit(c=self.c, event='connect_error', data=str(e))
                self.sio.sleep(0.5)

    def set_token(self, token):
        with self.lock:
            self.token = token
        if self.sio.connected:
            threading.Thread(target=self.hand_over, args=(token,), daemon=True).start()

    def hand_over(self, token):
        try:
            result = self.sio.call('refreshToken', token, timeout=15)
        except socketio.exceptions.TimeoutError:
            result = {'ok': False, 'error': {'code': 'timeout', 'message': 'refreshToken: no ack'}}
        except socketio.exceptions.BadNamespaceError:
            result = {'ok': False, 'error': {'code': 'disconnected', 'message': 'refreshToken: not connected'}}
        emit(c=self.c, event='refreshed', result=result)

    def call(self, call_id, method, args):
        threading.Thread(target=self.do_call, args=(call_id, method, args), daemon=True).start()

    def do_call(self, call_id, method, args):
        try:
            result = self.sio.call(method, tuple(args) if len(args) != 1 else args[0], timeout=15)
        except socketio.exceptions.TimeoutError:
            result = {'ok': False, 'error': {'code': 'timeout', 'message': method + ': no ack'}}
        except socketio.exceptions.BadNamespaceError:
            result = {'ok': False, 'error': {'code': 'disconnected', 'message': method + ': not connected'}}
        emit(c=self.c, event='ack', id=call_id, result=result)

    def close(self):
        self.closing = True
        self.sio.shutdown()
        emit(c=self.c, event='closed')


def main():
    clients = {}
    for line in sys.stdin:
        if not line.strip():
            continue
        cmd = json.loads(line)
        op = cmd['op']
        if op == 'exit':
            break
        if op == 'open':
            client = FleetClient(cmd['c'], cmd['url'], cmd['token'])
            clients[cmd['c']] = client
            client.start()
        elif op == 'token':
            clients[cmd['c']].set_token(cmd['token'])
        elif op == 'call':
            clients[cmd['c']].call(cmd['id'], cmd['method'], cmd['args'])
        elif op == 'close':
            threading.Thread(target=clients[cmd['c']].close, daemon=True).start()
    for client in clients.values():
        if not client.closing:
            client.close()


if __name__ == '__main__':
    main()
