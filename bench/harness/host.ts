/**
 * Child-process entry that hosts one server under test (a product node or a baseline server) so its
 * memory and CPU are its own. The parent drives it over IPC: start, call a fixture, read memory, stop.
 * Product nodes run its compiled form (bench/.build, compiled.ts) with plain node; baselines run it
 * through tsx.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/** What a hosted module's `start(params)` returns. */
export interface Hosted {
  info: Record<string, unknown>;
  calls?: Record<string, (args: any) => Promise<unknown>>;
  stop(): Promise<void>;
}

interface Request {
  id: number;
  cmd: 'start' | 'call' | 'mem' | 'peak-reset' | 'peak' | 'process' | 'stop';
  module?: string;
  params?: unknown;
  name?: string;
  args?: unknown;
}

let hosted: Hosted | undefined;
let peakRss = 0;
/**
 * The peak between `peak-reset` and `peak` (B7, B8). On Linux the kernel keeps it: `peak-reset` writes 5
 * to /proc/self/clear_refs, which sets VmHWM (the high-water mark of RSS) to the current RSS, and `peak`
 * reads VmHWM: exact, and nothing runs in the process meanwhile. Elsewhere RSS is sampled every 20 ms
 * between the two, which cost the import node 2% of its CPU in B8 (a read takes about 0.2 ms).
 */
let peakSampler: NodeJS.Timeout | undefined;
let kernelPeak = false;
function samplePeak(): void {
  const rss = process.memoryUsage.rss();
  if (rss > peakRss) peakRss = rss;
}

/** Resets the kernel's high-water mark of RSS; false where it cannot (not Linux, or /proc not writable). */
function resetKernelPeak(): boolean {
  try {
    writeFileSync('/proc/self/clear_refs', '5');
    return kernelHighWater() !== undefined;
  } catch {
    return false;
  }
}

/** VmHWM in bytes, or undefined where /proc/self/status does not say it. */
function kernelHighWater(): number | undefined {
  try {
    const kb = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'latin1'))?.[1];
    return kb === undefined ? undefined : Number(kb) * 1024;
  } catch {
    return undefined;
  }
}

function collect(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc) {
    gc();
    gc();
  }
}

/** A module loader or preload in the process's flags or NODE_OPTIONS (how tsx enters a process). */
const LOADER_FLAG = /^(--import|--loader|--experimental-loader|--require|-r)(=|$)/;

function loaderIn(args: string[]): boolean {
  return args.some((a) => LOADER_FLAG.test(a));
}

async function handle(req: Request): Promise<unknown> {
  switch (req.cmd) {
    case 'start': {
      const mod = (await import(pathToFileURL(path.resolve(req.module!)).href)) as {
        start(p: unknown): Promise<Hosted>;
      };
      hosted = await mod.start(req.params);
      return hosted.info;
    }
    case 'call': {
      const fn = hosted?.calls?.[req.name!];
      if (!fn) throw new Error(`hosted module has no call '${req.name}'`);
      return fn(req.args);
    }
    case 'mem':
      collect();
      return process.memoryUsage();
    case 'peak-reset':
      collect();
      peakRss = process.memoryUsage.rss();
      clearInterval(peakSampler);
      peakSampler = undefined;
      kernelPeak = resetKernelPeak();
      if (!kernelPeak) peakSampler = setInterval(samplePeak, 20).unref();
      return { rss: peakRss };
    case 'peak': {
      clearInterval(peakSampler);
      peakSampler = undefined;
      const rss = process.memoryUsage.rss();
      const high = kernelPeak ? kernelHighWater() : undefined;
      return { peakRss: Math.max(peakRss, rss, high ?? 0), rss, peakFrom: high === undefined ? 'samples' : 'VmHWM' };
    }
    case 'process':
      // What the harness checks a compiled host against: no loader, and this file is JavaScript.
      return {
        execArgv: process.execArgv,
        hostUrl: import.meta.url,
        loader: loaderIn(process.execArgv) || loaderIn((process.env.NODE_OPTIONS ?? '').split(/\s+/)),
      };
    case 'stop':
      await hosted?.stop();
      setImmediate(() => process.exit(0));
      return { stopped: true };
  }
}

process.on('message', (req: Request) => {
  handle(req).then(
    (result) => process.send?.({ id: req.id, ok: true, result }),
    (err: Error) => process.send?.({ id: req.id, ok: false, error: String(err?.stack ?? err) }),
  );
});
process.on('disconnect', () => process.exit(0));
