/**
 * Preloaded into a child node (`node --import tsx --import <this file>`; spawnChildNode does it when
 * its env has TURN_RECORD_FILE) to install a turn probe that appends, synchronously, one JSON line per
 * shard acquisition and per actor turn to that file: a SIGKILLed node's records up to its death stay.
 *
 * SIGUSR2 arms a freeze for TURN_FREEZE_ARM_MS: the node's next write of a `meeting` actor's turn
 * writes a `freeze` line and stops the whole process (SIGSTOP) right before the write leaves, so the
 * test can let another node take the shard and then resume it (SIGCONT) with a write of a superseded
 * epoch in flight. Test code only: the product has the probe hook, never this recorder.
 *
 * The probe module is the one the node itself loads: src/ through tsx, or with TURN_PROBE_MODULE the
 * compiled dist/actors/runtime/turn-probe.js (a compiled node, child-node.ts `compiled`), whose
 * `installTurnProbe` is the one dist/'s actor runtime reads. The recorder imports nothing else of the
 * project at run time, so child-node.ts can compile it into one plain module for a node without tsx.
 */
import { appendFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import type * as ProbeModule from '../../src/actors/runtime/turn-probe.js';
import type { TurnTrace, WriteTrace } from '../../src/actors/runtime/turn-probe.js';

const probeModule = process.env.TURN_PROBE_MODULE;
const { installTurnProbe, probeClock } = (await import(
  probeModule ? pathToFileURL(probeModule).href : '../../src/actors/runtime/turn-probe.js'
)) as typeof ProbeModule;

export type RecordLine =
  | { t: 'acquire'; node: string; shard: number; epoch: number; sentAt: number; at: number }
  | ({ t: 'turn' } & TurnTrace)
  | { t: 'armed'; until: number }
  | { t: 'freeze'; node: string; shard: number; epoch: number; actor: string; at: number; pid: number };

const file = process.env.TURN_RECORD_FILE;
const armMs = Number(process.env.TURN_FREEZE_ARM_MS ?? 5000);
let armedUntil = 0;

function append(line: RecordLine): void {
  appendFileSync(file!, `${JSON.stringify(line)}\n`);
}

if (file) {
  process.on('SIGUSR2', () => {
    armedUntil = probeClock() + armMs;
    append({ t: 'armed', until: armedUntil });
  });
  installTurnProbe({
    acquired: (node, shard, epoch, sentAt, at) => append({ t: 'acquire', node, shard, epoch, sentAt, at }),
    turn: (turn) => append({ t: 'turn', ...turn }),
    beforeWrite(turn: TurnTrace, write: WriteTrace) {
      if (write.store !== 'snapshot' || turn.kind !== 'meeting' || probeClock() >= armedUntil) return;
      armedUntil = 0;
      append({
        t: 'freeze',
        node: turn.node,
        shard: turn.shard,
        epoch: turn.epoch,
        actor: turn.actor,
        at: probeClock(),
        pid: process.pid,
      });
      process.kill(process.pid, 'SIGSTOP');
    },
  });
}
