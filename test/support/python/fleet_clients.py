"""Several outside clients of the hub in one process: python-socketio with its default transports
(long-polling, then the websocket upgrade) and its own reconnection, each keeping the position of its push
streams and handing it over (`auth.resume`) at every reconnection, as the documented protocol says
(docs/hub.md#recovering-missed-pushes): the position is the last push with nothing missing before it; a
push that arrives ahead of a gap (pushes of different nodes can overtake each other) does not move it,
a push already seen is dropped, and a gap still open after a second is asked for with `resume`.
Driven by test/resilience/faults/fleet-python.ts.

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
  {"c": 0, "event": "wedged", "state": {...}}   the library's connection was found wedged (below) and is
                                              being brought back: the client is away until `connected`

A wedged connection: python-socketio (5.18.1) leaves its client connected at the Socket.IO level over a
closed Engine.IO connection, for good, when the transport closes after the namespace's CONNECT answer
and before `connect()` returns: the Engine.IO disconnect handler skips a client not yet marked connected,
and either no reconnection starts (a reconnection was the one connecting) or the one that starts fails
every attempt as 'Already connected' (a first connection). Its calls then go nowhere and
nothing comes in. An application using the library has to notice that state itself; this one checks
twice a second and, seen twice in a row, emits `wedged` and connects again with its positions
(docs/decisions/1183-python-fleet-client-watchdog.md).
"""
import json
import socket
import sys
import threading
import time

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
        # Per stream: the position with nothing missing before it, and the seqs received beyond it.
        self.positions = {}
        self.ahead = {}
        # The positions handed over at the last connection attempt (reported with `connected`).
        self.handed = []
        self.gap_timer = None
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
        """Whether the push at position p is new; moves the stream's position over what has no gap before it."""
        stream, seq = p['stream'], p.get('seq', 0)
        with self.lock:
            cur = self.positions.get(stream)
            if cur is None or cur.get('epoch') != p.get('epoch'):
                self.positions[stream] = dict(p)
                self.ahead[stream] = set()
                return True
            ahead = self.ahead.setdefault(stream, set())
            if seq <= cur.get('seq', 0) or seq in ahead:
                return False
            if seq > cur.get('seq', 0) + 1:
                ahead.add(seq)
                self.watch_gaps()
                return True
            at = seq
            while at + 1 in ahead:
                at += 1
                ahead.discard(at)
            self.positions[stream] = dict(p, seq=at)
            return True

    def reset(self, position):
        with self.lock:
            cur = self.positions.get(position['stream'])
            if cur is None or cur.get('epoch') != position.get('epoch'):
                self.ahead[position['stream']] = set()
            self.positions[position['stream']] = dict(position)

    def watch_gaps(self):
        # Called with the lock held: one timer at a time asks for every open gap.
        if self.gap_timer is None and not self.closing:
            self.gap_timer = threading.Timer(1.0, self.fill_gaps)
            self.gap_timer.daemon = True
            self.gap_timer.start()

    def fill_gaps(self):
        with self.lock:
            self.gap_timer = None
            gaps = [dict(self.positions[s]) for s, a in self.ahead.items() if a and s in self.positions]
        if gaps and self.sio.connected:
            emit(c=self.c, event='gap', positions=gaps)
            try:
                self.sio.call('resume', gaps, timeout=15)
            except (socketio.exceptions.TimeoutError, socketio.exceptions.BadNamespaceError):
                pass
        with self.lock:
            if any(self.ahead.values()):
                self.watch_gaps()

    def on_push(self, event, data=None):
        if event == 'pushStreams':
            for p in data.get('positions', []):
                self.reset(p)
        elif event == 'resyncRequired':
            self.reset(data['position'])
        elif isinstance(data, dict) and isinstance(data.get('pos'), dict):
            if not self.note(data['pos']):
                return
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
        threading.Thread(target=self.watch, daemon=True).start()

    def wedged(self):
        return self.sio.connected and self.sio.eio.state == 'disconnected'

    def watch(self):
        # See `wedged` in the module's notes: seen twice 0.5 s apart (a disconnect in progress passes
        # through that state for an instant), the connection is dropped and made again.
        seen = False
        while not self.closing:
            time.sleep(0.5)
            if not self.wedged():
                seen = False
                continue
            if not seen:
                seen = True
                continue
            seen = False
            sio = self.sio
            emit(c=self.c, event='wedged', state={
                'connected': sio.connected, 'eio': sio.eio.state,
                'transport': sio.eio.current_transport, 'namespaces': list(sio.namespaces)})
            sio.connected = False
            sio.namespaces = {}
            # On a first connection the library started a reconnection of its own, which failed each
            # attempt as 'Already connected': now it connects; otherwise nothing is under way.
            if not getattr(sio, '_reconnect_task', None):
                self.run()

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
        with self.lock:
            if self.gap_timer is not None:
                self.gap_timer.cancel()
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
