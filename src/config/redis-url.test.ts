import { describe, expect, it } from '@jest/globals';
import { parseRedisUrl, redisUrlHasPassword } from './redis-url.js';

describe('REDIS_URL: one server or a cluster', () => {
  it('passes a single-server URL through as ioredis reads it', () => {
    expect(parseRedisUrl('redis://u:p@10.0.0.1:6379/2')).toEqual({
      kind: 'single',
      url: 'redis://u:p@10.0.0.1:6379/2',
    });
    expect(parseRedisUrl('rediss://h:6380').kind).toBe('single');
  });

  it('reads the seed nodes, credentials (URL-decoded) and TLS of a cluster URL', () => {
    expect(parseRedisUrl('redis+cluster://consult:p%40ss%3Aw@10.0.0.1:7000,10.0.0.2:7001/')).toEqual({
      kind: 'cluster',
      nodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: '10.0.0.2', port: 7001 },
      ],
      username: 'consult',
      password: 'p@ss:w',
      tls: false,
    });
    expect(parseRedisUrl('rediss+cluster://redis-0.redis:6379,[::1]:6380')).toEqual({
      kind: 'cluster',
      nodes: [
        { host: 'redis-0.redis', port: 6379 },
        { host: '::1', port: 6380 },
      ],
      tls: true,
    });
  });

  it('refuses other schemes, nodes without a port and ports out of range', () => {
    expect(() => parseRedisUrl('http://h:1')).toThrow(/redis\+cluster/);
    expect(() => parseRedisUrl('redis+cluster://h1:7000,h2')).toThrow(/'h2' must be host:port/);
    expect(() => parseRedisUrl('redis+cluster://h1:70000')).toThrow(/host:port/);
    expect(() => parseRedisUrl('redis+cluster://')).toThrow();
  });

  it('tells whether a password is given (production refuses a Redis without one)', () => {
    expect(redisUrlHasPassword('redis+cluster://u:secret@h:7000')).toBe(true);
    expect(redisUrlHasPassword('redis+cluster://h:7000,h2:7000')).toBe(false);
    expect(redisUrlHasPassword('redis://u:secret@h:6379')).toBe(true);
    expect(redisUrlHasPassword('redis://h:6379')).toBe(false);
  });
});
