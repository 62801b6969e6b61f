"""An outside client of the hub: python-socketio with its default transports (long-polling, then the
websocket upgrade), driven by test/e2e/hub/python-client.test.ts.

Usage: python hub_client.py '{"url": "http://acme.localhost:PORT", "token": "..."}'

Prints one JSON object per line on stdout:
  {"event": "connected", "transports": [...], "upgrades": [...], "transport": "websocket"}   once connected
  {"event": "push", "name": "onNewCall", "data": {...}}
  {"event": "ack", "method": "acceptCall", "result": {...}}   the acknowledgement of acceptCall
  {"event": "done", "transport": "websocket"}       after the ack, just before disconnecting
  {"event": "refused", "message": "...", "code": "..."}   the handshake was refused (exit code 3)
It answers the first onNewCall push by calling acceptCall with an ack, then disconnects.
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


def emit(**fields):
    print(json.dumps(fields), flush=True)


def main():
    cfg = json.loads(sys.argv[1])
    # request_timeout: the HTTP timeout of each long-polling request (5 s by default); a loaded CI machine
    # answered the handshake later than that. The test's own deadlines bound the run.
    sio = socketio.Client(reconnection=False, request_timeout=30)
    pushed = threading.Event()
    call = {}
    refusal = {}

    @sio.event
    def connect_error(data):
        refusal.update(data if isinstance(data, dict) else {'message': str(data)})

    @sio.on('onNewCall')
    def on_new_call(data):
        emit(event='push', name='onNewCall', data=data)
        if not call:
            call.update(data['call'])
            pushed.set()

    try:
        sio.connect(cfg['url'], socketio_path='/hubs/mobile', auth={'token': cfg['token']} if cfg.get('token') else None, wait_timeout=20)
    except socketio.exceptions.ConnectionError as e:
        emit(event='refused', message=str(e), code=(refusal.get('data') or {}).get('code'))
        sys.exit(3)
    # transports: the client's (default: long-polling first); upgrades: what the server offered in its
    # open packet, which it does only to a session opened by long-polling; transport: the one in use.
    emit(event='connected', transports=sio.eio.transports, upgrades=sio.eio.upgrades, transport=sio.transport())
    if not pushed.wait(timeout=float(cfg.get('timeoutSeconds', 30))):
        emit(event='timeout')
        sio.disconnect()
        sys.exit(2)
    result = sio.call('acceptCall', {'callId': call['callId']}, timeout=15)
    emit(event='ack', method='acceptCall', result=result)
    emit(event='done', transport=sio.transport())
    sio.disconnect()


if __name__ == '__main__':
    main()
