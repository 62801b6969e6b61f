import { randomUUID } from 'node:crypto';
import { body } from '../../../packages/client/src/index.js';
import { codeOf, TRANSIENT, type Ledger } from './fleet-ledger.js';
import type { Member, SdkMember } from './fleet-members.js';
import { trace } from './results.js';

export const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
/**
 * How long after it was sent an initCall that got no answer may still ring: no turn of an ask begins past
 * its deadline (decision 1140), the node's ask budget (10 s) plus its allowance for clocks apart
 * (ACTOR_DEADLINE_SKEW_MS, 1 s), and a margin.
 */
const LATEST_TURN_MS = 12_000;

const pick = <T>(xs: T[]): T | undefined => xs[Math.floor(Math.random() * xs.length)];

/** A headset of the fleet: its hardware id, registered to its device account. */
export interface Headset {
  member: SdkMember;
  hardwareId: string;
}

/** One meeting room of the day: a host, its patients and the ward's headsets, meeting after meeting. */
export interface MeetingSlot {
  host: SdkMember;
  patients: SdkMember[];
  headsets: Headset[];
}

export interface DayLoad {
  /** Concurrent callers. */
  callers: number;
  /** How long a caller lets a call ring or run before hanging up. */
  holdMs: number;
  /** A network blip every this often, on a random connected client, of 1 to 5 s. */
  blipEveryMs: number;
  /** Headset heartbeats while in a meeting. */
  heartbeatMs: number;
  /** Notifications a host sends in each meeting. */
  notifies: number;
}

/**
 * The load of a compressed day over the fleet: calls placed continuously between phones (each callee
 * accepts the invite when it arrives, live or replayed), meetings with a waiting room (the host starts
 * it, patients and headsets wait, the host admits them one by one, notifies, records with everyone's
 * consent, stops and ends it, then the next), headsets heartbeating while in a meeting, and network
 * blips of 1 to 5 s on random clients. Every acknowledgement goes to the ledger.
 */
export class FleetDay {
  stopped = false;
  /** Successful steps by agent kind. */
  readonly progress = { calls: 0, meetings: 0, heartbeats: 0, blips: 0, admissions: 0, consents: 0 };
  /** initCall requests sent (an unacknowledged one may still have made its call actor). */
  initCalls = 0;
  /** Events created (each has its meeting actor, maybe a recording). */
  eventsCreated = 0;
  /** Admissions acknowledged to a host: each admitted client must get its `waitingRoom` admitted push. */
  readonly admissions: { member: Member; eventId: string }[] = [];
  readonly admittedPushes = new Map<Member, Set<string>>();
  /** Calls whose end was not acknowledged in the day (ended when it is over). */
  readonly unended = new Map<string, Member>();
  /** Calls whose initCall was not acknowledged (they may ring all the same; hung up when the day is over). */
  readonly unanswered = new Map<string, { caller: Member; sentAt: number }>();
  private readonly agents: Promise<void>[] = [];
  private readonly blips = new Set<Promise<void>>();
  private readonly inMeeting = new Map<SdkMember, string>();
  /** Agents in a step now, with what they do (an agent that does not stop after the day is named by this). */
  readonly inStep = new Map<string, string>();

  constructor(
    private readonly ledger: Ledger,
    private readonly phones: Member[],
    private readonly members: Member[],
    private readonly slots: MeetingSlot[],
    private readonly load: DayLoad,
  ) {
    for (const p of phones) {
      // A callee accepts each invite when it arrives (a replayed one too: its caller may have hung up since).
      p.on('onNewCall', (push) => {
        if (push?.call?.status !== 'ringing' || this.stopped) return;
        const callId = push.call.callId as string;
        p.call('acceptCall', { callId }).then(
          () => this.ledger.accepted.add(callId),
          (e) => this.ledger.failed(p.name, 'acceptCall', e, ['invalid_state']),
        );
      });
    }
    for (const m of members) {
      this.admittedPushes.set(m, new Set());
      m.on('waitingRoom', (p) => {
        if (p?.state === 'admitted') this.admittedPushes.get(m)!.add(p.eventId);
      });
      // Each person asked agrees to the recording (a replayed ask of a request that concluded is refused).
      m.on('recordingConsentRequested', (p) => {
        if (!p?.required) return;
        this.retried(
          m,
          'consentToRecording',
          () => m.call('consentToRecording', { eventId: p.eventId, requestId: p.requestId, consent: true }),
          ['invalid_state', 'consent_request_not_found'],
        ).then(
          () => this.progress.consents++,
          (e) => this.ledger.failed(m.name, 'consentToRecording', e, ['invalid_state', 'consent_request_not_found']),
        );
      });
    }
  }

  start(): void {
    for (let i = 0; i < this.load.callers; i++) this.agents.push(this.agent(`caller${i}`, () => this.callOnce()));
    this.slots.forEach((s, i) =>
      this.agents.push(this.agent(`meeting${i}`, () => this.meetingCycle(s, i, `meeting${i}`))),
    );
    for (const s of this.slots)
      for (const h of s.headsets) this.agents.push(this.agent(`heartbeat:${h.member.name}`, () => this.heartbeat(h)));
    this.agents.push(this.agent('blips', () => this.blip()));
  }

  /** Stops the load and resolves once every agent ended its step and every blip is over. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.agents);
    await Promise.all(this.blips);
  }

  private async agent(name: string, step: () => Promise<void>): Promise<void> {
    while (!this.stopped) {
      this.inStep.set(name, 'step');
      try {
        await step();
      } catch (e) {
        this.ledger.failed(
          name,
          'agent',
          Object.assign(new Error((e as Error)?.stack ?? String(e)), { code: 'thrown' }),
        );
        await pause(500);
      } finally {
        this.inStep.delete(name);
      }
    }
  }

  /** One call: a connected phone calls another; the callee accepts on the invite; the caller hangs up. */
  private async callOnce(): Promise<void> {
    const caller = pick(this.phones.filter((p) => p.isUp()));
    const callee = pick(this.phones.filter((p) => p !== caller));
    if (!caller || !callee) return pause(200);
    // The caller names its call, as a client that may not hear the answer does: a call whose initCall
    // failed may still ring (its turn ran, the answer was lost), and is hung up by its id at the day's end.
    const callId = randomUUID();
    this.initCalls++;
    const sentAt = Date.now();
    try {
      await caller.call<{ callId: string }>('initCall', { calleeIds: [callee.userId], callType: 'audio', callId });
    } catch (e) {
      this.ledger.failed(caller.name, 'initCall', e);
      this.unanswered.set(callId, { caller, sentAt });
      return pause(300);
    }
    this.ledger.invite(caller.name, callee.userId, callId, !callee.isUp());
    this.unended.set(callId, caller);
    await pause(this.load.holdMs * (0.5 + Math.random()));
    await this.end(caller, callId);
    this.progress.calls++;
  }

  /** Hangs up; an acknowledged end is remembered with the status it answered. */
  async end(caller: Member, callId: string): Promise<boolean> {
    try {
      const r = await caller.call<{ status: string }>('endCall', { callId });
      this.ledger.calls.get(callId)!.ended = r.status;
      this.unended.delete(callId);
      return true;
    } catch (e) {
      this.ledger.failed(caller.name, 'endCall', e);
      return false;
    }
  }

  /**
   * Hangs up a call whose initCall was not answered: done once it is ended, or there is no such call when
   * its request can no longer run (it never ran, or the call finished and its state expired since).
   */
  async endUnanswered(callId: string): Promise<boolean> {
    const { caller, sentAt } = this.unanswered.get(callId)!;
    try {
      await caller.call('endCall', { callId });
    } catch (e) {
      if (codeOf(e) !== 'call_not_found') {
        this.ledger.failed(caller.name, 'endCall', e);
        return false;
      }
      // The request may still wait in a mailbox: asked again once its deadline is past.
      const settles = sentAt + LATEST_TURN_MS;
      if (Date.now() < settles) {
        await pause(settles - Date.now());
        return false;
      }
    }
    this.unanswered.delete(callId);
    return true;
  }

  /**
   * A step retried through the failures a client meets while nodes restart and its transport drops
   * (each is counted); any other refusal is thrown.
   */
  private async retried<T>(
    who: Member,
    method: string,
    fn: () => Promise<T>,
    expected: readonly string[] = [],
  ): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn();
      } catch (e) {
        this.ledger.failed(who.name, method, e, expected);
        // A request reset by a node going away (ECONNRESET) is `network`, as the ledger counts it.
        const code = codeOf(e);
        if (!TRANSIENT.has(code) || attempt >= 20) throw e;
        await who.settled();
        const retryAfter = (e as { retryAfter?: number }).retryAfter;
        await pause(code === 'rate_limited' ? 1_000 * (retryAfter ?? 1) : 200);
      }
    }
  }

  /** One meeting of a slot, from its creation to its end. */
  private async meetingCycle(slot: MeetingSlot, n: number, agent: string): Promise<void> {
    const { host } = slot;
    const doing = (what: string) => this.inStep.set(agent, what);
    doing('create');
    const now = Date.now();
    // Each attempt counts (one whose answer was lost may have made an event): the key bounds use the count.
    const event = await this.retried(host, 'POST /api/events/create', () =>
      (this.eventsCreated++, body)(
        host.api.POST('/api/events/create', {
          body: {
            name: `Ward round ${n}`,
            startAt: new Date(now).toISOString(),
            endAt: new Date(now + 3_600_000).toISOString(),
            participants: slot.patients.map((p) => ({ userId: p.userId, role: 'participant' as const })),
            waitingRoom: true,
          },
        }),
      ),
    );
    const eventId = event.id;
    const record = this.ledger.meeting(eventId);
    doing(`initEvent ${eventId}`);
    await this.retried(host, 'initEvent', () => host.call('initEvent', { eventId }));
    // Everyone else knocks: the waiting room holds them until the host admits each.
    const knocks = [
      ...slot.patients.map((p) => ({ m: p, join: () => p.call('joinEvent', { eventId }) })),
      ...slot.headsets.map((h) => ({
        m: h.member,
        join: () => h.member.call('initRapidConnect', h.hardwareId, event.meetingCode),
      })),
    ];
    doing(`knocks ${eventId}`);
    await Promise.all(
      knocks.map((k) => this.retried(k.m, k.m.role === 'device' ? 'initRapidConnect' : 'joinEvent', k.join)),
    );
    for (const k of knocks) {
      doing(`admit ${k.m.name} ${eventId}`);
      await this.admit(host, eventId, k.m, k.join);
      record.admitted.add(k.m.userId);
      this.admissions.push({ member: k.m, eventId });
      this.progress.admissions++;
      if (k.m.role === 'device') this.inMeeting.set(k.m as SdkMember, eventId);
    }
    for (let i = 0; i < this.load.notifies && !this.stopped; i++) {
      const d = await this.retried(host, 'notify', () =>
        host.call<{ seq: number }>('notify', `round-${i}`, { eventId }),
      );
      record.lastSeq = Math.max(record.lastSeq, d.seq);
    }
    // A recording everyone present agrees to: started only once every answer is in.
    const requestId = `rec-${eventId}`;
    const offs: (() => void)[] = [];
    const started = new Promise<void>((resolve) => {
      offs.push(host.on('meetingEvent', (e) => e?.eventId === eventId && e.type === 'recordingStarted' && resolve()));
      // A request that ends otherwise (someone's answer never came) is a finding; the meeting goes on.
      offs.push(
        host.on('recordingConsentResult', (r) => {
          if (r?.eventId !== eventId || r.outcome === 'granted') return;
          this.ledger.lostWrites.push(`meeting ${eventId}: consent ${r.outcome} ${JSON.stringify(r.unanswered)}`);
          resolve();
        }),
      );
    });
    const off = () => offs.forEach((f) => f());
    doing(`startRecording ${eventId}`);
    await this.retried(host, 'startRecording', () => host.call('startRecording', { eventId, requestId }));
    doing(`recordingStarted ${eventId}`);
    await started.finally(off);
    doing(`stopRecording ${eventId}`);
    record.recorded = true;
    await this.retried(host, 'stopRecording', () =>
      host.call('stopRecording', { eventId, requestId: `stop-${eventId}` }),
    );
    // What was acknowledged is in the meeting: every admission, every notify.
    const details = await this.retried(host, 'getMeetingDetails', () =>
      host.call<{ seq: number; members: { userId: string }[] }>('getMeetingDetails', { eventId }),
    );
    const present = new Set(details.members.map((m) => m.userId));
    for (const u of record.admitted)
      if (!present.has(u)) this.ledger.lostWrites.push(`meeting ${eventId}: admitted ${u} not a member`);
    if (details.seq < record.lastSeq)
      this.ledger.lostWrites.push(`meeting ${eventId}: seq ${details.seq} after ${record.lastSeq} was acknowledged`);
    for (const h of slot.headsets) this.inMeeting.delete(h.member);
    doing(`endMeeting ${eventId}`);
    await this.retried(host, 'endMeeting', () => host.call('endMeeting', { eventId }));
    record.ended = true;
    this.progress.meetings++;
    trace(`fleet: meeting ${n} ${eventId} done`);
  }

  /**
   * The host admits a waiting client. One whose connection dropped while it waited left the waiting room
   * (a closed waiting socket leaves it): once it is back it knocks again (`knock`; the SDK also joins
   * again by itself after a reconnection, the same waiting entry), and the host admits it then.
   */
  private async admit(host: Member, eventId: string, who: Member, knock: () => Promise<unknown>): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.retried(host, 'admit', () => host.call('admit', { eventId, userId: who.userId }), [
          'waiting_entry_not_found',
        ]);
        return;
      } catch (e) {
        if ((e as { code?: string }).code !== 'waiting_entry_not_found' || attempt >= 10) throw e;
        this.ledger.count('admit', 'left_while_waiting');
        await who.settled();
        await this.retried(who, who.role === 'device' ? 'initRapidConnect' : 'joinEvent', knock);
      }
    }
  }

  private async heartbeat(h: Headset): Promise<void> {
    await pause(this.load.heartbeatMs);
    const eventId = this.inMeeting.get(h.member);
    if (!eventId || !h.member.isUp()) return;
    try {
      await h.member.call('deviceStatus', eventId, {
        deviceId: h.hardwareId,
        batteryLevel: 50 + Math.floor(Math.random() * 50),
      });
      this.progress.heartbeats++;
    } catch (e) {
      this.ledger.failed(h.member.name, 'deviceStatus', e, ['invalid_state', 'forbidden']);
    }
  }

  private async blip(): Promise<void> {
    await pause(this.load.blipEveryMs);
    const m = pick(this.members.filter((x) => x.isUp()));
    if (!m || this.stopped) return;
    const b = m.blip(1_000 + Math.floor(Math.random() * 4_000)).then(() => void this.progress.blips++);
    this.blips.add(b);
    void b.finally(() => this.blips.delete(b));
  }
}
