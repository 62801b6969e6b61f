import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { Types } from 'mongoose';
import { startTestNode, type TestNode } from '../../support/node.js';
import { Mongo, type TenantDb } from '../../../src/data/mongo.js';
import { AppError, toAppError, toProblem, fromZod } from '../../../src/kernel/errors.js';

async function caught(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e,
  );
}

describe('error mapping of data-layer and validation failures', () => {
  let node: TestNode;
  let db: TenantDb;

  beforeAll(async () => {
    node = await startTestNode();
    await node.services.tenants.create({ name: 'errors', displayName: 'Errors Clinic' });
    db = node.infra.mongo.tenantDb('errors');
  });
  afterAll(async () => node.destroy());

  it('maps a duplicate key from the server to a 409 conflict', async () => {
    const doc = { username: 'dup', idpSubject: 'dup', displayName: 'Dup', sortName: 'dup', initial: 'D' };
    await db.models.User.create(doc);
    const e = toAppError(await caught(db.models.User.create({ ...doc, idpSubject: 'other' })));
    expect(e).toMatchObject({ code: 'conflict', status: 409 });
    const problem = toProblem(e, 'corr-1');
    expect(problem).toMatchObject({
      code: 'conflict',
      status: 409,
      correlationId: 'corr-1',
      type: 'urn:consult:problem:conflict',
    });
    expect(JSON.stringify(problem)).not.toMatch(/E11000|collection|tt_/);
  });

  it('names the fields of a duplicate key when the server reports them', () => {
    const e = toAppError(
      Object.assign(new Error('E11000 duplicate key error collection: x.users'), {
        name: 'MongoServerError',
        code: 11000,
        keyPattern: { username: 1 },
      }),
    );
    expect(e.code).toBe('conflict');
    expect(e.errors).toEqual([{ field: 'username', message: 'already exists' }]);
    expect(e.message).not.toMatch(/E11000/);
  });

  it('maps a malformed identifier to a 400 naming the path', async () => {
    const e = toAppError(await caught(db.models.Event.findById('not-an-object-id').exec()));
    expect(e).toMatchObject({ code: 'validation_failed', status: 400 });
    expect(e.errors?.[0]?.field).toBe('_id');
  });

  it('maps a document failing its schema to a 400 naming each field', async () => {
    const e = toAppError(
      await caught(
        db.models.Event.create({
          name: 'No dates',
          nameLower: 'no dates',
          meetingCode: 'x',
          organizerId: new Types.ObjectId(),
        }),
      ),
    );
    expect(e).toMatchObject({ code: 'validation_failed', status: 400 });
    expect(e.errors?.map((f) => f.field).sort()).toEqual(['endAt', 'startAt']);
  });

  it('maps an unreachable database to a retryable 503', async () => {
    const err = await caught(
      Mongo.connect({ uri: 'mongodb://127.0.0.1:9/', catalogDb: 'x', tenantDbPrefix: 'x_', timeoutMs: 300 }),
    );
    const e = toAppError(err);
    expect(e).toMatchObject({ code: 'service_unavailable', status: 503 });
    expect(e.retryAfter).toBeGreaterThan(0);
  });

  it('maps zod errors to validation_failed naming nested fields, with a part prefix', () => {
    const Body = z.object({
      name: z.string().min(1),
      participants: z.array(z.object({ userId: z.string().regex(/^[a-f0-9]{24}$/) })),
    });
    const r = Body.safeParse({ name: '', participants: [{ userId: 'x' }] });
    expect(r.success).toBe(false);
    const e = toAppError(r.error);
    expect(e.code).toBe('validation_failed');
    expect(e.errors?.map((f) => f.field)).toEqual(['name', 'participants.0.userId']);
    expect(e.message).toMatch(/^name: /);
    const q = fromZod(z.object({ take: z.coerce.number().int().max(100) }).safeParse({ take: '500' }).error!, 'query');
    expect(q.errors?.[0]?.field).toBe('query.take');
    expect(toProblem(q).errors).toEqual(q.errors);
  });

  it('passes AppErrors through and hides the text of unknown errors', () => {
    const app = new AppError('event_not_found', 'No event 42');
    expect(toAppError(app)).toBe(app);
    const e = toAppError(new TypeError('secret internals at /srv/app.js:12'));
    expect(e.code).toBe('internal');
    expect(toProblem(e).detail).toBe('An unexpected error occurred');
    expect(JSON.stringify(toProblem(e))).not.toMatch(/secret/);
  });
});
