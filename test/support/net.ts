import net from 'node:net';
import { readFileSync } from 'node:fs';

/**
 * The first port the kernel hands out as a connection's local port (`ip_local_port_range`). A port of
 * that range, found free and closed again, can be taken as the source port of any outgoing connection
 * (to Redis, to the database) before the test listens on it; below it, only a listener can take it.
 */
function ephemeralFloor(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 2048 ? low : 32768;
  } catch {
    return 32768;
  }
}

const listenOn = (port: number) =>
  new Promise<number | undefined>((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(undefined));
    srv.listen(port, '127.0.0.1', () => {
      const got = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(got));
    });
  });

/** Picked from here: below the local services' fixed ports (27027, 27028) and above the Redis Cluster's bus ports (16391-16393). */
const FROM = 20_000;
const TO = 27_000;

/**
 * Asks for a free loopback port (a private service, or a node whose URL must be known up front), below
 * the kernel's range of connections' local ports, so no outgoing connection can take it before the
 * caller listens; the kernel's choice if none there is free.
 */
export async function freePort(): Promise<number> {
  const to = Math.min(TO, ephemeralFloor());
  for (let i = 0; i < 20 && to > FROM; i++) {
    const port = await listenOn(FROM + Math.floor(Math.random() * (to - FROM)));
    if (port !== undefined) return port;
  }
  const port = await listenOn(0);
  if (port === undefined) throw new Error('no free loopback port');
  return port;
}
