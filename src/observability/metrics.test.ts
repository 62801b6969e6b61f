import { CounterChild, HistogramChild, Metrics } from './metrics.js';

/** The same metrics on two registries: one fed through prom-client's children, one through the kept ones. */
function pair() {
  const make = () => {
    const m = new Metrics({ node: 'n1' }, false);
    return {
      m,
      h: m.histogram('t_duration_seconds', 'test', ['method'], [0.005, 0.01, 0.1, 1]),
      c: m.counter('t_calls_total', 'test', ['method', 'outcome']),
    };
  };
  return { prom: make(), kept: make() };
}

describe('kept metric children', () => {
  it('expose exactly what prom-client children expose for the same observations, across a reset', async () => {
    const { prom, kept } = pair();
    const values = [0, 0.004, 0.005, 0.0051, 0.01, 0.5, 1, 1.5, 42, 1e-9, 0.1];
    const hA = new HistogramChild(kept.h, { method: 'a' });
    const hB = new HistogramChild(kept.h, { method: 'b' });
    const okA = new CounterChild(kept.c, { method: 'a', outcome: 'ok' });
    const errA = new CounterChild(kept.c, { method: 'a', outcome: 'timeout' });
    const feed = () => {
      values.forEach((v, i) => {
        prom.h.labels({ method: 'a' }).observe(v);
        hA.observe(v);
        if (i % 3 === 0) {
          prom.h.labels({ method: 'b' }).observe(v * 2);
          hB.observe(v * 2);
        }
        prom.c.labels({ method: 'a', outcome: i % 4 ? 'ok' : 'timeout' }).inc();
        (i % 4 ? okA : errA).inc();
      });
      prom.c.inc({ method: 'a', outcome: 'ok' }, 2.5);
      okA.inc(2.5);
    };
    feed();
    expect(await kept.m.registry.metrics()).toBe(await prom.m.registry.metrics());
    expect(await kept.m.registry.metrics()).toContain('t_duration_seconds_count{node="n1",method="a"} 11');

    // A reset replaces prom-client's records: the kept children find theirs again.
    prom.m.registry.resetMetrics();
    kept.m.registry.resetMetrics();
    feed();
    feed();
    expect(await kept.m.registry.metrics()).toBe(await prom.m.registry.metrics());
    expect(await kept.m.registry.metrics()).toContain('t_calls_total{method="a",outcome="ok",node="n1"} 21');
  });

  it('refuse what prom-client refuses', () => {
    const { kept } = pair();
    const h = new HistogramChild(kept.h, { method: 'a' });
    const c = new CounterChild(kept.c, { method: 'a', outcome: 'ok' });
    h.observe(0.01);
    c.inc();
    expect(() => h.observe(Number.NaN)).toThrow(TypeError);
    expect(() => h.observe(Number.POSITIVE_INFINITY)).toThrow(TypeError);
    expect(() => c.inc(-1)).toThrow('It is not possible to decrease a counter');
  });
});
