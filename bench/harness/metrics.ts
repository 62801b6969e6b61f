import type { HostProcess } from './hosts.js';

interface MetricJson {
  name: string;
  values: { value: number; labels?: Record<string, string>; metricName?: string }[];
}

/** Sum over labels of a counter/gauge of a node's registry (prom-client JSON over IPC). */
export async function metricSum(node: HostProcess, name: string): Promise<number> {
  const all = await node.call<MetricJson[]>('metrics');
  const m = all.find((x) => x.name === name);
  return m ? m.values.filter((v) => !v.metricName || v.metricName === name).reduce((s, v) => s + v.value, 0) : 0;
}
