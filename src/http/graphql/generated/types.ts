// Generated from src/http/graphql/schema.ts: do not edit (npm run generate:graphql).
import type { GraphQLResolveInfo } from 'graphql';
import type { MeModel, GroupModel, PrivateServerConfigModel } from '../models.js';
import type { GraphQLContext } from '../context.js';
export type Maybe<T> = T | null;
export type InputMaybe<T> = Maybe<T>;
export type Omit<T, K extends keyof T> = Pick<T, Exclude<keyof T, K>>;
export type RequireFields<T, K extends keyof T> = Omit<T, K> & { [P in K]-?: NonNullable<T[P]> };
/** All built-in and custom scalars, mapped to their actual values */
export type Scalars = {
  ID: { input: string; output: string; }
  String: { input: string; output: string; }
  Boolean: { input: boolean; output: boolean; }
  Int: { input: number; output: number; }
  Float: { input: number; output: number; }
};

/** What admit answers: the queue after it, and whom it admitted. */
export type AdmitResult = {
  __typename?: 'AdmitResult';
  admitted: Array<Scalars['ID']['output']>;
  eventId: Scalars['ID']['output'];
  waiting: Array<WaitingEntry>;
};

/** An alphabet bucket of the contact index (A-Z or #) and how many contacts it holds. */
export type AlphabetBucket = {
  __typename?: 'AlphabetBucket';
  count: Scalars['Int']['output'];
  letter: Scalars['String']['output'];
};

export type AuditBrokenLink = {
  __typename?: 'AuditBrokenLink';
  expected: Scalars['String']['output'];
  found: Scalars['String']['output'];
  /** gap, prev_mismatch, hash_mismatch, missing, not_signed, checkpoint_invalid or unsigned (docs/audit.md) */
  reason: Scalars['String']['output'];
  /** The first entry that cannot be shown to be what was signed. */
  seq: Scalars['Int']['output'];
};

export type AuditChainReport = {
  __typename?: 'AuditChainReport';
  /** Entries 1..covered are verified and covered by the signed checkpoints. */
  covered: Scalars['Int']['output'];
  firstBroken?: Maybe<AuditBrokenLink>;
  headHash: Scalars['String']['output'];
  headSeq: Scalars['Int']['output'];
  /** What fails, naming the entry. */
  message?: Maybe<Scalars['String']['output']>;
  ok: Scalars['Boolean']['output'];
  verified: Scalars['Int']['output'];
};

/** An entry of the tamper-evident audit trail. */
export type AuditEntry = {
  __typename?: 'AuditEntry';
  action: Scalars['String']['output'];
  actorId?: Maybe<Scalars['ID']['output']>;
  createdAt: Scalars['String']['output'];
  /** The entry's details as JSON. */
  details?: Maybe<Scalars['String']['output']>;
  eventId?: Maybe<Scalars['ID']['output']>;
  hash: Scalars['String']['output'];
  id: Scalars['ID']['output'];
  ip?: Maybe<Scalars['String']['output']>;
  outcome: Scalars['String']['output'];
  prev: Scalars['String']['output'];
  /** Position in the tenant's chain, from 1, without gaps. */
  seq: Scalars['Int']['output'];
  subjectId?: Maybe<Scalars['ID']['output']>;
};

/** Filter and page of an audit trail read; every field narrows. before: the next of the previous page. */
export type AuditFilter = {
  action?: InputMaybe<Scalars['String']['input']>;
  actorId?: InputMaybe<Scalars['ID']['input']>;
  before?: InputMaybe<Scalars['Int']['input']>;
  /** The consultation (event). */
  eventId?: InputMaybe<Scalars['ID']['input']>;
  /** ISO 8601: entries at or after this time. */
  from?: InputMaybe<Scalars['String']['input']>;
  subjectId?: InputMaybe<Scalars['ID']['input']>;
  /** At most 500 (default 50). */
  take?: InputMaybe<Scalars['Int']['input']>;
  /** ISO 8601: entries before this time. */
  to?: InputMaybe<Scalars['String']['input']>;
};

export type AuditPage = {
  __typename?: 'AuditPage';
  items: Array<AuditEntry>;
  /** Pass as filter.before for the next (older) page. */
  next?: Maybe<Scalars['Int']['output']>;
};

export type BasicTenantInfo = {
  __typename?: 'BasicTenantInfo';
  baseUrl: Scalars['String']['output'];
  displayName: Scalars['String']['output'];
  name: Scalars['String']['output'];
  realm: Scalars['String']['output'];
};

/** A contact as lists show it, merged with presence and the caller's favourite mark. */
export type Contact = {
  __typename?: 'Contact';
  avatarUrl?: Maybe<Scalars['String']['output']>;
  department?: Maybe<Scalars['String']['output']>;
  displayName: Scalars['String']['output'];
  favourite: Scalars['Boolean']['output'];
  id: Scalars['ID']['output'];
  initial: Scalars['String']['output'];
  kind: Scalars['String']['output'];
  online: Scalars['Boolean']['output'];
  title?: Maybe<Scalars['String']['output']>;
  username: Scalars['String']['output'];
};

/** A full contact card. */
export type ContactInfo = {
  __typename?: 'ContactInfo';
  avatarUrl?: Maybe<Scalars['String']['output']>;
  department?: Maybe<Scalars['String']['output']>;
  displayName: Scalars['String']['output'];
  email?: Maybe<Scalars['String']['output']>;
  favourite: Scalars['Boolean']['output'];
  firstName?: Maybe<Scalars['String']['output']>;
  id: Scalars['ID']['output'];
  initial: Scalars['String']['output'];
  kind: Scalars['String']['output'];
  lastName?: Maybe<Scalars['String']['output']>;
  lastSeenAt?: Maybe<Scalars['String']['output']>;
  online: Scalars['Boolean']['output'];
  phone?: Maybe<Scalars['String']['output']>;
  role: Scalars['String']['output'];
  title?: Maybe<Scalars['String']['output']>;
  username: Scalars['String']['output'];
};

export type ContactPage = {
  __typename?: 'ContactPage';
  items: Array<Contact>;
  skip: Scalars['Int']['output'];
  take: Scalars['Int']['output'];
  total: Scalars['Int']['output'];
};

export type ContactSortType =
  | 'FAVOURITES_FIRST'
  | 'NAME';

/** The answer of every host control of a meeting (decision 900): its control state after it. */
export type ControlResult = {
  __typename?: 'ControlResult';
  /** Whom the control acted on (the event id for lock/unlock); empty when it changed nothing. */
  affected: Array<Scalars['ID']['output']>;
  ended: Scalars['Boolean']['output'];
  eventId: Scalars['ID']['output'];
  /** Hosts in the meeting now. */
  hosts: Array<Scalars['ID']['output']>;
  locked: Scalars['Boolean']['output'];
  /** Members in the meeting now. */
  members: Array<Scalars['ID']['output']>;
  /** The meetingEvent sequence number after the control. */
  seq: Scalars['Int']['output'];
};

/** What deny answers: the queue after it, and whom it denied. */
export type DenyResult = {
  __typename?: 'DenyResult';
  denied: Array<Scalars['ID']['output']>;
  eventId: Scalars['ID']['output'];
  waiting: Array<WaitingEntry>;
};

/** A file of an event and how it belongs there: the fields of FileItem (as REST's EventFile has them), plus source and attached. */
export type EventFile = {
  __typename?: 'EventFile';
  /** On the event's attachment list. */
  attached: Scalars['Boolean']['output'];
  contentType: Scalars['String']['output'];
  createdAt?: Maybe<Scalars['String']['output']>;
  eventId?: Maybe<Scalars['ID']['output']>;
  /** @deprecated The file's fields are on EventFile itself, as in REST; read them there. */
  file: FileItem;
  fileName: Scalars['String']['output'];
  hash: Scalars['String']['output'];
  height?: Maybe<Scalars['Int']['output']>;
  id: Scalars['ID']['output'];
  /** image, video, audio, document, recording or other */
  kind: Scalars['String']['output'];
  ownerId: Scalars['ID']['output'];
  sessionId?: Maybe<Scalars['String']['output']>;
  size: Scalars['Float']['output'];
  /** recording, upload or attachment */
  source: Scalars['String']['output'];
  /** none, pending, ready or failed */
  thumbnailStatus: Scalars['String']['output'];
  thumbnailUrl?: Maybe<Scalars['String']['output']>;
  url: Scalars['String']['output'];
  width?: Maybe<Scalars['Int']['output']>;
};

export type EventFilePage = {
  __typename?: 'EventFilePage';
  items: Array<EventFile>;
  skip: Scalars['Int']['output'];
  take: Scalars['Int']['output'];
  total: Scalars['Int']['output'];
};

/** A stored file; url and thumbnailUrl are the download routes, relative to the tenant host. */
export type FileItem = {
  __typename?: 'FileItem';
  contentType: Scalars['String']['output'];
  createdAt?: Maybe<Scalars['String']['output']>;
  eventId?: Maybe<Scalars['ID']['output']>;
  fileName: Scalars['String']['output'];
  hash: Scalars['String']['output'];
  height?: Maybe<Scalars['Int']['output']>;
  id: Scalars['ID']['output'];
  /** image, video, audio, document, recording or other */
  kind: Scalars['String']['output'];
  ownerId: Scalars['ID']['output'];
  sessionId?: Maybe<Scalars['String']['output']>;
  size: Scalars['Float']['output'];
  /** none, pending, ready or failed */
  thumbnailStatus: Scalars['String']['output'];
  thumbnailUrl?: Maybe<Scalars['String']['output']>;
  url: Scalars['String']['output'];
  width?: Maybe<Scalars['Int']['output']>;
};

export type FilePage = {
  __typename?: 'FilePage';
  items: Array<FileItem>;
  skip: Scalars['Int']['output'];
  take: Scalars['Int']['output'];
  total: Scalars['Int']['output'];
};

/** A contact group (GroupInfo). */
export type Group = {
  __typename?: 'Group';
  id: Scalars['ID']['output'];
  name: Scalars['String']['output'];
  owner?: Maybe<Contact>;
  ownerId: Scalars['ID']['output'];
  participantCount: Scalars['Int']['output'];
  participants: Array<Contact>;
};

/** A recording consent answer kept on a ledger row (decision 910). */
export type LedgerConsent = {
  __typename?: 'LedgerConsent';
  at: Scalars['String']['output'];
  consent: Scalars['Boolean']['output'];
  /** Answered on joining while the recording ran. */
  late: Scalars['Boolean']['output'];
  requestId: Scalars['String']['output'];
};

/** A row of a consultation's ledger: who was there, when, for how long, from which device. */
export type LedgerEntry = {
  __typename?: 'LedgerEntry';
  conferenceId: Scalars['String']['output'];
  /** The client the participant joined from, as the conferencing system reported it. */
  device?: Maybe<Scalars['String']['output']>;
  /** The headset, when the participant is a device attached to the event. */
  deviceId?: Maybe<Scalars['ID']['output']>;
  displayName?: Maybe<Scalars['String']['output']>;
  durationSeconds: Scalars['Int']['output'];
  joinedAt: Scalars['String']['output'];
  leftAt?: Maybe<Scalars['String']['output']>;
  /** Identity in the conference room (user id, device:<id> or guest:<id>). */
  participantKey: Scalars['String']['output'];
  /** This participant's answers to recording consent requests, oldest first. */
  recordingConsents: Array<LedgerConsent>;
  userId?: Maybe<Scalars['ID']['output']>;
};

export type LedgerPage = {
  __typename?: 'LedgerPage';
  items: Array<LedgerEntry>;
  skip: Scalars['Int']['output'];
  take: Scalars['Int']['output'];
  total: Scalars['Int']['output'];
};

export type LockoutRules = {
  __typename?: 'LockoutRules';
  /** First lock of an address; each further lock that day doubles it. */
  lockoutSeconds: Scalars['Int']['output'];
  /** Failed PINs from one client address before that address is locked. */
  maxAttempts: Scalars['Int']['output'];
  /** Failed PINs of the account per day, from all addresses, before PIN sign-in is locked until the PIN is reset. */
  maxFailuresPerDay: Scalars['Int']['output'];
  /** Cap of the doubling. */
  maxLockoutSeconds: Scalars['Int']['output'];
};

/** Current user and permissions. */
export type Me = {
  __typename?: 'Me';
  /** The user's own contact card (presence, avatar, profile fields). */
  contact: ContactInfo;
  displayName: Scalars['String']['output'];
  email?: Maybe<Scalars['String']['output']>;
  id: Scalars['ID']['output'];
  impersonatedBy?: Maybe<Scalars['ID']['output']>;
  kind: Scalars['String']['output'];
  permissions: Array<Scalars['String']['output']>;
  purpose?: Maybe<Scalars['String']['output']>;
  role: Scalars['String']['output'];
  scheme: Scalars['String']['output'];
  tenant: Scalars['String']['output'];
  username: Scalars['String']['output'];
};

export type MeetingSettings = {
  __typename?: 'MeetingSettings';
  heartbeatSeconds: Scalars['Int']['output'];
  /** Recording consent: off, all (every person present) or patients (the patients only). */
  recordingConsent: Scalars['String']['output'];
  /** How long a recording consent request waits for answers before it is cancelled. */
  recordingConsentTimeoutSeconds: Scalars['Int']['output'];
  ringTimeoutSeconds: Scalars['Int']['output'];
  /** Meetings open with a waiting room unless the event says otherwise. */
  waitingRoom: Scalars['Boolean']['output'];
  /** Participants invited on the event skip the waiting room. */
  waitingRoomAutoAdmitInvited: Scalars['Boolean']['output'];
  /** How long a waiting entry lasts before it expires. */
  waitingRoomExpirySeconds: Scalars['Int']['output'];
};

/**
 * The waiting room's decisions (decision 870) and the host controls of a meeting (docs/meetings.md,
 * decision 900): the same turns of the meeting actor as the hub methods and REST routes of the same
 * names; hosts of the meeting only. A repeated requestId answers the first result and applies once.
 */
export type Mutation = {
  __typename?: 'Mutation';
  /** Make a member one more host of this meeting. */
  addHost: ControlResult;
  /** Waiting room (decision 870): admit one entry (userId) or all; the admitted get their join details by the waitingRoom push. */
  admit: AdmitResult;
  /** Answer a member's requestHostAccess: grant (they become a host) or refuse; they are told. */
  answerHostAccess: ControlResult;
  /** Answer a recording consent request (recordingConsentRequested) with yes or no, once (decision 910). */
  consentToRecording: RecordingConsentAnswer;
  /** Waiting room: deny one entry (userId) or all, with an optional message; they must be admitted to come back. */
  deny: DenyResult;
  /** End the meeting for everyone: every socket leaves, the VCS room closes, the event is ended. */
  endMeeting: ControlResult;
  /** New joins wait in the waiting room, or are refused (meeting_locked) without one. */
  lockMeeting: ControlResult;
  /** Ask a member's client to mute (the muteRequested push). */
  muteRequest: ControlResult;
  /** Take a member out of the meeting; they come back only when a host admits them again. */
  removeParticipant: ControlResult;
  /** Hand the host role to a member; the caller stops being a host of this meeting. */
  transferHost: ControlResult;
  unlockMeeting: ControlResult;
};


/**
 * The waiting room's decisions (decision 870) and the host controls of a meeting (docs/meetings.md,
 * decision 900): the same turns of the meeting actor as the hub methods and REST routes of the same
 * names; hosts of the meeting only. A repeated requestId answers the first result and applies once.
 */
export type MutationAddHostArgs = {
  eventId: Scalars['ID']['input'];
  requestId?: InputMaybe<Scalars['String']['input']>;
  userId: Scalars['ID']['input'];
};


/**
 * The waiting room's decisions (decision 870) and the host controls of a meeting (docs/meetings.md,
 * decision 900): the same turns of the meeting actor as the hub methods and REST routes of the same
 * names; hosts of the meeting only. A repeated requestId answers the first result and applies once.
 */
export type MutationAdmitArgs = {
  all?: InputMaybe<Scalars['Boolean']['input']>;
  eventId: Scalars['ID']['input'];
  requestId?: InputMaybe<Scalars['String']['input']>;
  userId?: InputMaybe<Scalars['ID']['input']>;
};


/**
 * The waiting room's decisions (decision 870) and the host controls of a meeting (docs/meetings.md,
 * decision 900): the same turns of the meeting actor as the hub methods and REST routes of the same
 * names; hosts of the meeting only. A repeated requestId answers the first result and applies once.
 */
export type MutationAnswerHostAccessArgs = {
  eventId: Scalars['ID']['input'];
  grant: Scalars['Boolean']['input'];
  message?: InputMaybe<Scalars['String']['input']>;
  requestId?: InputMaybe<Scalars['String']['input']>;
  userId: Scalars['ID']['input'];
};


/**
 * The waiting room's decisions (decision 870) and the host controls of a meeting (docs/meetings.md,
 * decision 900): the same turns of the meeting actor as the hub methods and REST routes of the same
 * names; hosts of the meeting only. A repeated requestId answers the first result and applies once.
 */
export type MutationConsentToRecordingArgs = {
  consent: Scalars['Boolean']['input'];
  eventId: Scalars['ID']['input'];
  requestId: Scalars['String']['input'];
};


/**
 * The waiting room's decisions (decision 870) and the host controls of a meeting (docs/meetings.md,
 * decision 900): the same turns of the meeting actor as the hub methods and REST routes of the same
 * names; hosts of the meeting only. A repeated requestId answers the first result and applies once.
 */
export type MutationDenyArgs = {
  all?: InputMaybe<Scalars['Boolean']['input']>;
  eventId: Scalars['ID']['input'];
  message?: InputMaybe<Scalars['String']['input']>;
  requestId?: InputMaybe<Scalars['String']['input']>;
  userId?: InputMaybe<Scalars['ID']['input']>;
};


/**
 * The waiting room's decisions (decision 870) and the host controls of a meeting (docs/meetings.md,
 * decision 900): the same turns of the meeting actor as the hub methods and REST routes of the same
 * names; hosts of the meeting only. A repeated requestId answers the first result and applies once.
 */
export type MutationEndMeetingArgs = {
  eventId: Scalars['ID']['input'];
  reason?: InputMaybe<Scalars['String']['input']>;
  requestId?: InputMaybe<Scalars['String']['input']>;
};


/**
 * The waiting room's decisions (decision 870) and the host controls of a meeting (docs/meetings.md,
 * decision 900): the same turns of the meeting actor as the hub methods and REST routes of the same
 * names; hosts of the meeting only. A repeated requestId answers the first result and applies once.
 */
export type MutationLockMeetingArgs = {
  eventId: Scalars['ID']['input'];
  requestId?: InputMaybe<Scalars['String']['input']>;
};


/**
 * The waiting room's decisions (decision 870) and the host controls of a meeting (docs/meetings.md,
 * decision 900): the same turns of the meeting actor as the hub methods and REST routes of the same
 * names; hosts of the meeting only. A repeated requestId answers the first result and applies once.
 */
export type MutationMuteRequestArgs = {
  eventId: Scalars['ID']['input'];
  media?: InputMaybe<MuteMedia>;
  message?: InputMaybe<Scalars['String']['input']>;
  requestId?: InputMaybe<Scalars['String']['input']>;
  userId: Scalars['ID']['input'];
};


/**
 * The waiting room's decisions (decision 870) and the host controls of a meeting (docs/meetings.md,
 * decision 900): the same turns of the meeting actor as the hub methods and REST routes of the same
 * names; hosts of the meeting only. A repeated requestId answers the first result and applies once.
 */
export type MutationRemoveParticipantArgs = {
  eventId: Scalars['ID']['input'];
  reason?: InputMaybe<Scalars['String']['input']>;
  requestId?: InputMaybe<Scalars['String']['input']>;
  userId: Scalars['ID']['input'];
};


/**
 * The waiting room's decisions (decision 870) and the host controls of a meeting (docs/meetings.md,
 * decision 900): the same turns of the meeting actor as the hub methods and REST routes of the same
 * names; hosts of the meeting only. A repeated requestId answers the first result and applies once.
 */
export type MutationTransferHostArgs = {
  eventId: Scalars['ID']['input'];
  requestId?: InputMaybe<Scalars['String']['input']>;
  userId: Scalars['ID']['input'];
};


/**
 * The waiting room's decisions (decision 870) and the host controls of a meeting (docs/meetings.md,
 * decision 900): the same turns of the meeting actor as the hub methods and REST routes of the same
 * names; hosts of the meeting only. A repeated requestId answers the first result and applies once.
 */
export type MutationUnlockMeetingArgs = {
  eventId: Scalars['ID']['input'];
  requestId?: InputMaybe<Scalars['String']['input']>;
};

/** What a mute request asks the member's client to mute. */
export type MuteMedia =
  | 'audio'
  | 'both'
  | 'video';

export type MyNotice = {
  __typename?: 'MyNotice';
  body: Scalars['String']['output'];
  createdAt: Scalars['String']['output'];
  id: Scalars['ID']['output'];
  seen: Scalars['Boolean']['output'];
  seenAt?: Maybe<Scalars['String']['output']>;
  severity: Scalars['String']['output'];
  title: Scalars['String']['output'];
};

export type OidcClientConfig = {
  __typename?: 'OidcClientConfig';
  clientId: Scalars['String']['output'];
  issuer: Scalars['String']['output'];
};

export type PagingInput = {
  skip?: InputMaybe<Scalars['Int']['input']>;
  take?: InputMaybe<Scalars['Int']['input']>;
};

export type PinPolicy = {
  __typename?: 'PinPolicy';
  digitsOnly: Scalars['Boolean']['output'];
  historyCount: Scalars['Int']['output'];
  maxLength: Scalars['Int']['output'];
  minLength: Scalars['Int']['output'];
};

/** Private-server (standalone) onboarding configuration. */
export type PrivateServerConfig = {
  __typename?: 'PrivateServerConfig';
  baseUrl: Scalars['String']['output'];
  displayName: Scalars['String']['output'];
  graphqlUrl: Scalars['String']['output'];
  hubUrl: Scalars['String']['output'];
  /** The whole configuration as the JSON text the QR code carries. */
  json: Scalars['String']['output'];
  oidc: OidcClientConfig;
  tenant: Scalars['String']['output'];
  version: Scalars['Int']['output'];
};

export type PrivateServerConfigQrCode = {
  __typename?: 'PrivateServerConfigQrCode';
  config: PrivateServerConfig;
  /** PNG image as a data: URL. */
  dataUrl: Scalars['String']['output'];
};

export type Query = {
  __typename?: 'Query';
  /** The tenant's audit trail, newest first, filtered; needs audit:read (docs/audit.md). */
  auditTrail: AuditPage;
  /** Verifies the tenant's audit trail against its signed checkpoints and names the first entry that fails; needs audit:read. */
  auditVerify: AuditChainReport;
  basicTenantInfo: BasicTenantInfo;
  contactAlphabets: Array<AlphabetBucket>;
  /** The event's files: uploaded for it, its recordings and attachments, newest first (members of the event). */
  eventFiles: EventFilePage;
  /** The consultation's ledger in join order (hosts of the event and tenant administrators); take is clamped to PAGE_MAX_TAKE. */
  eventLedger: LedgerPage;
  generatePrivateServerConfig: PrivateServerConfig;
  generatePrivateServerConfigQrCode: PrivateServerConfigQrCode;
  groupById: Group;
  hasPin: Scalars['Boolean']['output'];
  me: Me;
  /** Contact list. isCallList ranks contacts by recent calls and meetings; take is clamped to PAGE_MAX_TAKE. */
  myContacts: ContactPage;
  myNotice?: Maybe<MyNotice>;
  /** A call session's files, newest first (the call's members see all, anyone else their own uploads). */
  sessionFiles: FilePage;
  tenantConfig: TenantConfig;
  tenantSecurityRules: TenantSecurityRules;
  /** The meeting's waiting queue in arrival order (hosts of the event). */
  waitingRoom: WaitingRoom;
};


export type QueryAuditTrailArgs = {
  filter?: InputMaybe<AuditFilter>;
};


export type QueryEventFilesArgs = {
  eventId: Scalars['ID']['input'];
  paging?: InputMaybe<PagingInput>;
};


export type QueryEventLedgerArgs = {
  eventId: Scalars['ID']['input'];
  paging?: InputMaybe<PagingInput>;
};


export type QueryGroupByIdArgs = {
  groupId: Scalars['ID']['input'];
};


export type QueryMyContactsArgs = {
  alphabet?: InputMaybe<Scalars['String']['input']>;
  isCallList?: InputMaybe<Scalars['Boolean']['input']>;
  paging?: InputMaybe<PagingInput>;
  sortType?: InputMaybe<ContactSortType>;
};


export type QuerySessionFilesArgs = {
  paging?: InputMaybe<PagingInput>;
  sessionId: Scalars['String']['input'];
};


export type QueryWaitingRoomArgs = {
  eventId: Scalars['ID']['input'];
};

/** The state of a recording consent request after an answer (decision 910). */
export type RecordingConsentAnswer = {
  __typename?: 'RecordingConsentAnswer';
  consent: Scalars['Boolean']['output'];
  /** A joiner held while the recording runs entered the meeting (its join details come by the waitingRoom push). */
  entered: Scalars['Boolean']['output'];
  eventId: Scalars['ID']['output'];
  requestId: Scalars['String']['output'];
  /** pending, granted, refused or timedOut */
  state: Scalars['String']['output'];
};

export type SessionRules = {
  __typename?: 'SessionRules';
  accessTokenTtlSeconds: Scalars['Int']['output'];
  maxSessionsPerUser: Scalars['Int']['output'];
  offlineTokenTtlDays: Scalars['Int']['output'];
  refreshTokenTtlSeconds: Scalars['Int']['output'];
};

/** Tenant runtime configuration. */
export type TenantConfig = {
  __typename?: 'TenantConfig';
  displayName: Scalars['String']['output'];
  features: TenantFeatures;
  locale: Scalars['String']['output'];
  meetings: MeetingSettings;
  tenant: Scalars['String']['output'];
  timezone: Scalars['String']['output'];
  uploads: UploadConfig;
};

export type TenantFeatures = {
  __typename?: 'TenantFeatures';
  chat: Scalars['Boolean']['output'];
  guestJoin: Scalars['Boolean']['output'];
  rapidConnect: Scalars['Boolean']['output'];
  recording: Scalars['Boolean']['output'];
};

export type TenantSecurityRules = {
  __typename?: 'TenantSecurityRules';
  lockout: LockoutRules;
  loginCodeTtlSeconds: Scalars['Int']['output'];
  pin: PinPolicy;
  session: SessionRules;
};

export type UploadConfig = {
  __typename?: 'UploadConfig';
  allowedExtensions: Array<Scalars['String']['output']>;
  maxBytes: Scalars['Float']['output'];
  maxImagePixels: Scalars['Float']['output'];
};

/** Someone waiting for a host's admission. */
export type WaitingEntry = {
  __typename?: 'WaitingEntry';
  /** On the event's participant list, as opposed to a guest by code. */
  invited: Scalars['Boolean']['output'];
  /** person or device */
  kind: Scalars['String']['output'];
  name: Scalars['String']['output'];
  position: Scalars['Int']['output'];
  /** denied or removed before, when coming back */
  returning?: Maybe<Scalars['String']['output']>;
  /** participant, guest or device */
  role: Scalars['String']['output'];
  since: Scalars['String']['output'];
  userId: Scalars['ID']['output'];
};

export type WaitingRoom = {
  __typename?: 'WaitingRoom';
  eventId: Scalars['ID']['output'];
  waiting: Array<WaitingEntry>;
};



export type ResolverTypeWrapper<T> = Promise<T> | T;


export type ResolverWithResolve<TResult, TParent, TContext, TArgs> = {
  resolve: ResolverFn<TResult, TParent, TContext, TArgs>;
};
export type Resolver<TResult, TParent = Record<PropertyKey, never>, TContext = Record<PropertyKey, never>, TArgs = Record<PropertyKey, never>> = ResolverFn<TResult, TParent, TContext, TArgs> | ResolverWithResolve<TResult, TParent, TContext, TArgs>;

export type ResolverFn<TResult, TParent, TContext, TArgs> = (
  parent: TParent,
  args: TArgs,
  context: TContext,
  info: GraphQLResolveInfo
) => Promise<TResult> | TResult;

export type SubscriptionSubscribeFn<TResult, TParent, TContext, TArgs> = (
  parent: TParent,
  args: TArgs,
  context: TContext,
  info: GraphQLResolveInfo
) => AsyncIterable<TResult> | Promise<AsyncIterable<TResult>>;

export type SubscriptionResolveFn<TResult, TParent, TContext, TArgs> = (
  parent: TParent,
  args: TArgs,
  context: TContext,
  info: GraphQLResolveInfo
) => TResult | Promise<TResult>;

export interface SubscriptionSubscriberObject<TResult, TKey extends string, TParent, TContext, TArgs> {
  subscribe: SubscriptionSubscribeFn<{ [key in TKey]: TResult }, TParent, TContext, TArgs>;
  resolve?: SubscriptionResolveFn<TResult, { [key in TKey]: TResult }, TContext, TArgs>;
}

export interface SubscriptionResolverObject<TResult, TParent, TContext, TArgs> {
  subscribe: SubscriptionSubscribeFn<any, TParent, TContext, TArgs>;
  resolve: SubscriptionResolveFn<TResult, any, TContext, TArgs>;
}

export type SubscriptionObject<TResult, TKey extends string, TParent, TContext, TArgs> =
  | SubscriptionSubscriberObject<TResult, TKey, TParent, TContext, TArgs>
  | SubscriptionResolverObject<TResult, TParent, TContext, TArgs>;

export type SubscriptionResolver<TResult, TKey extends string, TParent = Record<PropertyKey, never>, TContext = Record<PropertyKey, never>, TArgs = Record<PropertyKey, never>> =
  | ((...args: any[]) => SubscriptionObject<TResult, TKey, TParent, TContext, TArgs>)
  | SubscriptionObject<TResult, TKey, TParent, TContext, TArgs>;

export type TypeResolveFn<TTypes, TParent = Record<PropertyKey, never>, TContext = Record<PropertyKey, never>> = (
  parent: TParent,
  context: TContext,
  info: GraphQLResolveInfo
) => Maybe<TTypes> | Promise<Maybe<TTypes>>;

export type IsTypeOfResolverFn<T = Record<PropertyKey, never>, TContext = Record<PropertyKey, never>> = (obj: T, context: TContext, info: GraphQLResolveInfo) => boolean | Promise<boolean>;

export type NextResolverFn<T> = () => Promise<T>;

export type DirectiveResolverFn<TResult = Record<PropertyKey, never>, TParent = Record<PropertyKey, never>, TContext = Record<PropertyKey, never>, TArgs = Record<PropertyKey, never>> = (
  next: NextResolverFn<TResult>,
  parent: TParent,
  args: TArgs,
  context: TContext,
  info: GraphQLResolveInfo
) => TResult | Promise<TResult>;





/** Mapping between all available schema types and the resolvers types */
export type ResolversTypes = {
  AdmitResult: ResolverTypeWrapper<AdmitResult>;
  AlphabetBucket: ResolverTypeWrapper<AlphabetBucket>;
  AuditBrokenLink: ResolverTypeWrapper<AuditBrokenLink>;
  AuditChainReport: ResolverTypeWrapper<AuditChainReport>;
  AuditEntry: ResolverTypeWrapper<AuditEntry>;
  AuditFilter: AuditFilter;
  AuditPage: ResolverTypeWrapper<AuditPage>;
  BasicTenantInfo: ResolverTypeWrapper<BasicTenantInfo>;
  Boolean: ResolverTypeWrapper<Scalars['Boolean']['output']>;
  Contact: ResolverTypeWrapper<Contact>;
  ContactInfo: ResolverTypeWrapper<ContactInfo>;
  ContactPage: ResolverTypeWrapper<ContactPage>;
  ContactSortType: ContactSortType;
  ControlResult: ResolverTypeWrapper<ControlResult>;
  DenyResult: ResolverTypeWrapper<DenyResult>;
  EventFile: ResolverTypeWrapper<EventFile>;
  EventFilePage: ResolverTypeWrapper<EventFilePage>;
  FileItem: ResolverTypeWrapper<FileItem>;
  FilePage: ResolverTypeWrapper<FilePage>;
  Float: ResolverTypeWrapper<Scalars['Float']['output']>;
  Group: ResolverTypeWrapper<GroupModel>;
  ID: ResolverTypeWrapper<Scalars['ID']['output']>;
  Int: ResolverTypeWrapper<Scalars['Int']['output']>;
  LedgerConsent: ResolverTypeWrapper<LedgerConsent>;
  LedgerEntry: ResolverTypeWrapper<LedgerEntry>;
  LedgerPage: ResolverTypeWrapper<LedgerPage>;
  LockoutRules: ResolverTypeWrapper<LockoutRules>;
  Me: ResolverTypeWrapper<MeModel>;
  MeetingSettings: ResolverTypeWrapper<MeetingSettings>;
  Mutation: ResolverTypeWrapper<Record<PropertyKey, never>>;
  MuteMedia: MuteMedia;
  MyNotice: ResolverTypeWrapper<MyNotice>;
  OidcClientConfig: ResolverTypeWrapper<OidcClientConfig>;
  PagingInput: PagingInput;
  PinPolicy: ResolverTypeWrapper<PinPolicy>;
  PrivateServerConfig: ResolverTypeWrapper<PrivateServerConfigModel>;
  PrivateServerConfigQrCode: ResolverTypeWrapper<Omit<PrivateServerConfigQrCode, 'config'> & { config: ResolversTypes['PrivateServerConfig'] }>;
  Query: ResolverTypeWrapper<Record<PropertyKey, never>>;
  RecordingConsentAnswer: ResolverTypeWrapper<RecordingConsentAnswer>;
  SessionRules: ResolverTypeWrapper<SessionRules>;
  String: ResolverTypeWrapper<Scalars['String']['output']>;
  TenantConfig: ResolverTypeWrapper<TenantConfig>;
  TenantFeatures: ResolverTypeWrapper<TenantFeatures>;
  TenantSecurityRules: ResolverTypeWrapper<TenantSecurityRules>;
  UploadConfig: ResolverTypeWrapper<UploadConfig>;
  WaitingEntry: ResolverTypeWrapper<WaitingEntry>;
  WaitingRoom: ResolverTypeWrapper<WaitingRoom>;
};

/** Mapping between all available schema types and the resolvers parents */
export type ResolversParentTypes = {
  AdmitResult: AdmitResult;
  AlphabetBucket: AlphabetBucket;
  AuditBrokenLink: AuditBrokenLink;
  AuditChainReport: AuditChainReport;
  AuditEntry: AuditEntry;
  AuditFilter: AuditFilter;
  AuditPage: AuditPage;
  BasicTenantInfo: BasicTenantInfo;
  Boolean: Scalars['Boolean']['output'];
  Contact: Contact;
  ContactInfo: ContactInfo;
  ContactPage: ContactPage;
  ControlResult: ControlResult;
  DenyResult: DenyResult;
  EventFile: EventFile;
  EventFilePage: EventFilePage;
  FileItem: FileItem;
  FilePage: FilePage;
  Float: Scalars['Float']['output'];
  Group: GroupModel;
  ID: Scalars['ID']['output'];
  Int: Scalars['Int']['output'];
  LedgerConsent: LedgerConsent;
  LedgerEntry: LedgerEntry;
  LedgerPage: LedgerPage;
  LockoutRules: LockoutRules;
  Me: MeModel;
  MeetingSettings: MeetingSettings;
  Mutation: Record<PropertyKey, never>;
  MyNotice: MyNotice;
  OidcClientConfig: OidcClientConfig;
  PagingInput: PagingInput;
  PinPolicy: PinPolicy;
  PrivateServerConfig: PrivateServerConfigModel;
  PrivateServerConfigQrCode: Omit<PrivateServerConfigQrCode, 'config'> & { config: ResolversParentTypes['PrivateServerConfig'] };
  Query: Record<PropertyKey, never>;
  RecordingConsentAnswer: RecordingConsentAnswer;
  SessionRules: SessionRules;
  String: Scalars['String']['output'];
  TenantConfig: TenantConfig;
  TenantFeatures: TenantFeatures;
  TenantSecurityRules: TenantSecurityRules;
  UploadConfig: UploadConfig;
  WaitingEntry: WaitingEntry;
  WaitingRoom: WaitingRoom;
};

export type AdmitResultResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['AdmitResult'] = ResolversParentTypes['AdmitResult']> = {
  admitted?: Resolver<Array<ResolversTypes['ID']>, ParentType, ContextType>;
  eventId?: Resolver<ResolversTypes['ID'], ParentType, ContextType>;
  waiting?: Resolver<Array<ResolversTypes['WaitingEntry']>, ParentType, ContextType>;
};

export type AlphabetBucketResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['AlphabetBucket'] = ResolversParentTypes['AlphabetBucket']> = {
  count?: Resolver<ResolversTypes['Int'], ParentType, ContextType>;
  letter?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
};

export type AuditBrokenLinkResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['AuditBrokenLink'] = ResolversParentTypes['AuditBrokenLink']> = {
  expected?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  found?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  reason?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  seq?: Resolver<ResolversTypes['Int'], ParentType, ContextType>;
};

export type AuditChainReportResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['AuditChainReport'] = ResolversParentTypes['AuditChainReport']> = {
  covered?: Resolver<ResolversTypes['Int'], ParentType, ContextType>;
  firstBroken?: Resolver<Maybe<ResolversTypes['AuditBrokenLink']>, ParentType, ContextType>;
  headHash?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  headSeq?: Resolver<ResolversTypes['Int'], ParentType, ContextType>;
  message?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
  ok?: Resolver<ResolversTypes['Boolean'], ParentType, ContextType>;
  verified?: Resolver<ResolversTypes['Int'], ParentType, ContextType>;
};

export type AuditEntryResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['AuditEntry'] = ResolversParentTypes['AuditEntry']> = {
  action?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  actorId?: Resolver<Maybe<ResolversTypes['ID']>, ParentType, ContextType>;
  createdAt?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  details?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
  eventId?: Resolver<Maybe<ResolversTypes['ID']>, ParentType, ContextType>;
  hash?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  id?: Resolver<ResolversTypes['ID'], ParentType, ContextType>;
  ip?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
  outcome?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  prev?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  seq?: Resolver<ResolversTypes['Int'], ParentType, ContextType>;
  subjectId?: Resolver<Maybe<ResolversTypes['ID']>, ParentType, ContextType>;
};

export type AuditPageResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['AuditPage'] = ResolversParentTypes['AuditPage']> = {
  items?: Resolver<Array<ResolversTypes['AuditEntry']>, ParentType, ContextType>;
  next?: Resolver<Maybe<ResolversTypes['Int']>, ParentType, ContextType>;
};

export type BasicTenantInfoResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['BasicTenantInfo'] = ResolversParentTypes['BasicTenantInfo']> = {
  baseUrl?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  displayName?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  name?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  realm?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
};

export type ContactResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['Contact'] = ResolversParentTypes['Contact']> = {
  avatarUrl?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
  department?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
  displayName?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  favourite?: Resolver<ResolversTypes['Boolean'], ParentType, ContextType>;
  id?: Resolver<ResolversTypes['ID'], ParentType, ContextType>;
  initial?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  kind?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  online?: Resolver<ResolversTypes['Boolean'], ParentType, ContextType>;
  title?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
  username?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
};

export type ContactInfoResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['ContactInfo'] = ResolversParentTypes['ContactInfo']> = {
  avatarUrl?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
  department?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
  displayName?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  email?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
  favourite?: Resolver<ResolversTypes['Boolean'], ParentType, ContextType>;
  firstName?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
  id?: Resolver<ResolversTypes['ID'], ParentType, ContextType>;
  initial?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  kind?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  lastName?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
  lastSeenAt?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
  online?: Resolver<ResolversTypes['Boolean'], ParentType, ContextType>;
  phone?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
  role?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  title?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
  username?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
};

export type ContactPageResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['ContactPage'] = ResolversParentTypes['ContactPage']> = {
  items?: Resolver<Array<ResolversTypes['Contact']>, ParentType, ContextType>;
  skip?: Resolver<ResolversTypes['Int'], ParentType, ContextType>;
  take?: Resolver<ResolversTypes['Int'], ParentType, ContextType>;
  total?: Resolver<ResolversTypes['Int'], ParentType, ContextType>;
};

export type ControlResultResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['ControlResult'] = ResolversParentTypes['ControlResult']> = {
  affected?: Resolver<Array<ResolversTypes['ID']>, ParentType, ContextType>;
  ended?: Resolver<ResolversTypes['Boolean'], ParentType, ContextType>;
  eventId?: Resolver<ResolversTypes['ID'], ParentType, ContextType>;
  hosts?: Resolver<Array<ResolversTypes['ID']>, ParentType, ContextType>;
  locked?: Resolver<ResolversTypes['Boolean'], ParentType, ContextType>;
  members?: Resolver<Array<ResolversTypes['ID']>, ParentType, ContextType>;
  seq?: Resolver<ResolversTypes['Int'], ParentType, ContextType>;
};

export type DenyResultResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['DenyResult'] = ResolversParentTypes['DenyResult']> = {
  denied?: Resolver<Array<ResolversTypes['ID']>, ParentType, ContextType>;
  eventId?: Resolver<ResolversTypes['ID'], ParentType, ContextType>;
  waiting?: Resolver<Array<ResolversTypes['WaitingEntry']>, ParentType, ContextType>;
};

export type EventFileResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['EventFile'] = ResolversParentTypes['EventFile']> = {
  attached?: Resolver<ResolversTypes['Boolean'], ParentType, ContextType>;
  contentType?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  createdAt?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
  eventId?: Resolver<Maybe<ResolversTypes['ID']>, ParentType, ContextType>;
  file?: Resolver<ResolversTypes['FileItem'], ParentType, ContextType>;
  fileName?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  hash?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  height?: Resolver<Maybe<ResolversTypes['Int']>, ParentType, ContextType>;
  id?: Resolver<ResolversTypes['ID'], ParentType, ContextType>;
  kind?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  ownerId?: Resolver<ResolversTypes['ID'], ParentType, ContextType>;
  sessionId?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
  size?: Resolver<ResolversTypes['Float'], ParentType, ContextType>;
  source?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  thumbnailStatus?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  thumbnailUrl?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
  url?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  width?: Resolver<Maybe<ResolversTypes['Int']>, ParentType, ContextType>;
};

export type EventFilePageResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['EventFilePage'] = ResolversParentTypes['EventFilePage']> = {
  items?: Resolver<Array<ResolversTypes['EventFile']>, ParentType, ContextType>;
  skip?: Resolver<ResolversTypes['Int'], ParentType, ContextType>;
  take?: Resolver<ResolversTypes['Int'], ParentType, ContextType>;
  total?: Resolver<ResolversTypes['Int'], ParentType, ContextType>;
};

export type FileItemResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['FileItem'] = ResolversParentTypes['FileItem']> = {
  contentType?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  createdAt?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
  eventId?: Resolver<Maybe<ResolversTypes['ID']>, ParentType, ContextType>;
  fileName?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  hash?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  height?: Resolver<Maybe<ResolversTypes['Int']>, ParentType, ContextType>;
  id?: Resolver<ResolversTypes['ID'], ParentType, ContextType>;
  kind?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  ownerId?: Resolver<ResolversTypes['ID'], ParentType, ContextType>;
  sessionId?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
  size?: Resolver<ResolversTypes['Float'], ParentType, ContextType>;
  thumbnailStatus?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  thumbnailUrl?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
  url?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  width?: Resolver<Maybe<ResolversTypes['Int']>, ParentType, ContextType>;
};

export type FilePageResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['FilePage'] = ResolversParentTypes['FilePage']> = {
  items?: Resolver<Array<ResolversTypes['FileItem']>, ParentType, ContextType>;
  skip?: Resolver<ResolversTypes['Int'], ParentType, ContextType>;
  take?: Resolver<ResolversTypes['Int'], ParentType, ContextType>;
  total?: Resolver<ResolversTypes['Int'], ParentType, ContextType>;
};

export type GroupResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['Group'] = ResolversParentTypes['Group']> = {
  id?: Resolver<ResolversTypes['ID'], ParentType, ContextType>;
  name?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  owner?: Resolver<Maybe<ResolversTypes['Contact']>, ParentType, ContextType>;
  ownerId?: Resolver<ResolversTypes['ID'], ParentType, ContextType>;
  participantCount?: Resolver<ResolversTypes['Int'], ParentType, ContextType>;
  participants?: Resolver<Array<ResolversTypes['Contact']>, ParentType, ContextType>;
};

export type LedgerConsentResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['LedgerConsent'] = ResolversParentTypes['LedgerConsent']> = {
  at?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  consent?: Resolver<ResolversTypes['Boolean'], ParentType, ContextType>;
  late?: Resolver<ResolversTypes['Boolean'], ParentType, ContextType>;
  requestId?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
};

export type LedgerEntryResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['LedgerEntry'] = ResolversParentTypes['LedgerEntry']> = {
  conferenceId?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  device?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
  deviceId?: Resolver<Maybe<ResolversTypes['ID']>, ParentType, ContextType>;
  displayName?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
  durationSeconds?: Resolver<ResolversTypes['Int'], ParentType, ContextType>;
  joinedAt?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  leftAt?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
  participantKey?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  recordingConsents?: Resolver<Array<ResolversTypes['LedgerConsent']>, ParentType, ContextType>;
  userId?: Resolver<Maybe<ResolversTypes['ID']>, ParentType, ContextType>;
};

export type LedgerPageResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['LedgerPage'] = ResolversParentTypes['LedgerPage']> = {
  items?: Resolver<Array<ResolversTypes['LedgerEntry']>, ParentType, ContextType>;
  skip?: Resolver<ResolversTypes['Int'], ParentType, ContextType>;
  take?: Resolver<ResolversTypes['Int'], ParentType, ContextType>;
  total?: Resolver<ResolversTypes['Int'], ParentType, ContextType>;
};

export type LockoutRulesResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['LockoutRules'] = ResolversParentTypes['LockoutRules']> = {
  lockoutSeconds?: Resolver<ResolversTypes['Int'], ParentType, ContextType>;
  maxAttempts?: Resolver<ResolversTypes['Int'], ParentType, ContextType>;
  maxFailuresPerDay?: Resolver<ResolversTypes['Int'], ParentType, ContextType>;
  maxLockoutSeconds?: Resolver<ResolversTypes['Int'], ParentType, ContextType>;
};

export type MeResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['Me'] = ResolversParentTypes['Me']> = {
  contact?: Resolver<ResolversTypes['ContactInfo'], ParentType, ContextType>;
  displayName?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  email?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
  id?: Resolver<ResolversTypes['ID'], ParentType, ContextType>;
  impersonatedBy?: Resolver<Maybe<ResolversTypes['ID']>, ParentType, ContextType>;
  kind?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  permissions?: Resolver<Array<ResolversTypes['String']>, ParentType, ContextType>;
  purpose?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
  role?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  scheme?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  tenant?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  username?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
};

export type MeetingSettingsResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['MeetingSettings'] = ResolversParentTypes['MeetingSettings']> = {
  heartbeatSeconds?: Resolver<ResolversTypes['Int'], ParentType, ContextType>;
  recordingConsent?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  recordingConsentTimeoutSeconds?: Resolver<ResolversTypes['Int'], ParentType, ContextType>;
  ringTimeoutSeconds?: Resolver<ResolversTypes['Int'], ParentType, ContextType>;
  waitingRoom?: Resolver<ResolversTypes['Boolean'], ParentType, ContextType>;
  waitingRoomAutoAdmitInvited?: Resolver<ResolversTypes['Boolean'], ParentType, ContextType>;
  waitingRoomExpirySeconds?: Resolver<ResolversTypes['Int'], ParentType, ContextType>;
};

export type MutationResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['Mutation'] = ResolversParentTypes['Mutation']> = {
  addHost?: Resolver<ResolversTypes['ControlResult'], ParentType, ContextType, RequireFields<MutationAddHostArgs, 'eventId' | 'userId'>>;
  admit?: Resolver<ResolversTypes['AdmitResult'], ParentType, ContextType, RequireFields<MutationAdmitArgs, 'eventId'>>;
  answerHostAccess?: Resolver<ResolversTypes['ControlResult'], ParentType, ContextType, RequireFields<MutationAnswerHostAccessArgs, 'eventId' | 'grant' | 'userId'>>;
  consentToRecording?: Resolver<ResolversTypes['RecordingConsentAnswer'], ParentType, ContextType, RequireFields<MutationConsentToRecordingArgs, 'consent' | 'eventId' | 'requestId'>>;
  deny?: Resolver<ResolversTypes['DenyResult'], ParentType, ContextType, RequireFields<MutationDenyArgs, 'eventId'>>;
  endMeeting?: Resolver<ResolversTypes['ControlResult'], ParentType, ContextType, RequireFields<MutationEndMeetingArgs, 'eventId'>>;
  lockMeeting?: Resolver<ResolversTypes['ControlResult'], ParentType, ContextType, RequireFields<MutationLockMeetingArgs, 'eventId'>>;
  muteRequest?: Resolver<ResolversTypes['ControlResult'], ParentType, ContextType, RequireFields<MutationMuteRequestArgs, 'eventId' | 'userId'>>;
  removeParticipant?: Resolver<ResolversTypes['ControlResult'], ParentType, ContextType, RequireFields<MutationRemoveParticipantArgs, 'eventId' | 'userId'>>;
  transferHost?: Resolver<ResolversTypes['ControlResult'], ParentType, ContextType, RequireFields<MutationTransferHostArgs, 'eventId' | 'userId'>>;
  unlockMeeting?: Resolver<ResolversTypes['ControlResult'], ParentType, ContextType, RequireFields<MutationUnlockMeetingArgs, 'eventId'>>;
};

export type MyNoticeResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['MyNotice'] = ResolversParentTypes['MyNotice']> = {
  body?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  createdAt?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  id?: Resolver<ResolversTypes['ID'], ParentType, ContextType>;
  seen?: Resolver<ResolversTypes['Boolean'], ParentType, ContextType>;
  seenAt?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
  severity?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  title?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
};

export type OidcClientConfigResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['OidcClientConfig'] = ResolversParentTypes['OidcClientConfig']> = {
  clientId?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  issuer?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
};

export type PinPolicyResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['PinPolicy'] = ResolversParentTypes['PinPolicy']> = {
  digitsOnly?: Resolver<ResolversTypes['Boolean'], ParentType, ContextType>;
  historyCount?: Resolver<ResolversTypes['Int'], ParentType, ContextType>;
  maxLength?: Resolver<ResolversTypes['Int'], ParentType, ContextType>;
  minLength?: Resolver<ResolversTypes['Int'], ParentType, ContextType>;
};

export type PrivateServerConfigResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['PrivateServerConfig'] = ResolversParentTypes['PrivateServerConfig']> = {
  baseUrl?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  displayName?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  graphqlUrl?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  hubUrl?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  json?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  oidc?: Resolver<ResolversTypes['OidcClientConfig'], ParentType, ContextType>;
  tenant?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  version?: Resolver<ResolversTypes['Int'], ParentType, ContextType>;
};

export type PrivateServerConfigQrCodeResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['PrivateServerConfigQrCode'] = ResolversParentTypes['PrivateServerConfigQrCode']> = {
  config?: Resolver<ResolversTypes['PrivateServerConfig'], ParentType, ContextType>;
  dataUrl?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
};

export type QueryResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['Query'] = ResolversParentTypes['Query']> = {
  auditTrail?: Resolver<ResolversTypes['AuditPage'], ParentType, ContextType, Partial<QueryAuditTrailArgs>>;
  auditVerify?: Resolver<ResolversTypes['AuditChainReport'], ParentType, ContextType>;
  basicTenantInfo?: Resolver<ResolversTypes['BasicTenantInfo'], ParentType, ContextType>;
  contactAlphabets?: Resolver<Array<ResolversTypes['AlphabetBucket']>, ParentType, ContextType>;
  eventFiles?: Resolver<ResolversTypes['EventFilePage'], ParentType, ContextType, RequireFields<QueryEventFilesArgs, 'eventId'>>;
  eventLedger?: Resolver<ResolversTypes['LedgerPage'], ParentType, ContextType, RequireFields<QueryEventLedgerArgs, 'eventId'>>;
  generatePrivateServerConfig?: Resolver<ResolversTypes['PrivateServerConfig'], ParentType, ContextType>;
  generatePrivateServerConfigQrCode?: Resolver<ResolversTypes['PrivateServerConfigQrCode'], ParentType, ContextType>;
  groupById?: Resolver<ResolversTypes['Group'], ParentType, ContextType, RequireFields<QueryGroupByIdArgs, 'groupId'>>;
  hasPin?: Resolver<ResolversTypes['Boolean'], ParentType, ContextType>;
  me?: Resolver<ResolversTypes['Me'], ParentType, ContextType>;
  myContacts?: Resolver<ResolversTypes['ContactPage'], ParentType, ContextType, RequireFields<QueryMyContactsArgs, 'isCallList' | 'sortType'>>;
  myNotice?: Resolver<Maybe<ResolversTypes['MyNotice']>, ParentType, ContextType>;
  sessionFiles?: Resolver<ResolversTypes['FilePage'], ParentType, ContextType, RequireFields<QuerySessionFilesArgs, 'sessionId'>>;
  tenantConfig?: Resolver<ResolversTypes['TenantConfig'], ParentType, ContextType>;
  tenantSecurityRules?: Resolver<ResolversTypes['TenantSecurityRules'], ParentType, ContextType>;
  waitingRoom?: Resolver<ResolversTypes['WaitingRoom'], ParentType, ContextType, RequireFields<QueryWaitingRoomArgs, 'eventId'>>;
};

export type RecordingConsentAnswerResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['RecordingConsentAnswer'] = ResolversParentTypes['RecordingConsentAnswer']> = {
  consent?: Resolver<ResolversTypes['Boolean'], ParentType, ContextType>;
  entered?: Resolver<ResolversTypes['Boolean'], ParentType, ContextType>;
  eventId?: Resolver<ResolversTypes['ID'], ParentType, ContextType>;
  requestId?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  state?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
};

export type SessionRulesResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['SessionRules'] = ResolversParentTypes['SessionRules']> = {
  accessTokenTtlSeconds?: Resolver<ResolversTypes['Int'], ParentType, ContextType>;
  maxSessionsPerUser?: Resolver<ResolversTypes['Int'], ParentType, ContextType>;
  offlineTokenTtlDays?: Resolver<ResolversTypes['Int'], ParentType, ContextType>;
  refreshTokenTtlSeconds?: Resolver<ResolversTypes['Int'], ParentType, ContextType>;
};

export type TenantConfigResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['TenantConfig'] = ResolversParentTypes['TenantConfig']> = {
  displayName?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  features?: Resolver<ResolversTypes['TenantFeatures'], ParentType, ContextType>;
  locale?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  meetings?: Resolver<ResolversTypes['MeetingSettings'], ParentType, ContextType>;
  tenant?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  timezone?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  uploads?: Resolver<ResolversTypes['UploadConfig'], ParentType, ContextType>;
};

export type TenantFeaturesResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['TenantFeatures'] = ResolversParentTypes['TenantFeatures']> = {
  chat?: Resolver<ResolversTypes['Boolean'], ParentType, ContextType>;
  guestJoin?: Resolver<ResolversTypes['Boolean'], ParentType, ContextType>;
  rapidConnect?: Resolver<ResolversTypes['Boolean'], ParentType, ContextType>;
  recording?: Resolver<ResolversTypes['Boolean'], ParentType, ContextType>;
};

export type TenantSecurityRulesResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['TenantSecurityRules'] = ResolversParentTypes['TenantSecurityRules']> = {
  lockout?: Resolver<ResolversTypes['LockoutRules'], ParentType, ContextType>;
  loginCodeTtlSeconds?: Resolver<ResolversTypes['Int'], ParentType, ContextType>;
  pin?: Resolver<ResolversTypes['PinPolicy'], ParentType, ContextType>;
  session?: Resolver<ResolversTypes['SessionRules'], ParentType, ContextType>;
};

export type UploadConfigResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['UploadConfig'] = ResolversParentTypes['UploadConfig']> = {
  allowedExtensions?: Resolver<Array<ResolversTypes['String']>, ParentType, ContextType>;
  maxBytes?: Resolver<ResolversTypes['Float'], ParentType, ContextType>;
  maxImagePixels?: Resolver<ResolversTypes['Float'], ParentType, ContextType>;
};

export type WaitingEntryResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['WaitingEntry'] = ResolversParentTypes['WaitingEntry']> = {
  invited?: Resolver<ResolversTypes['Boolean'], ParentType, ContextType>;
  kind?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  name?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  position?: Resolver<ResolversTypes['Int'], ParentType, ContextType>;
  returning?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
  role?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  since?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  userId?: Resolver<ResolversTypes['ID'], ParentType, ContextType>;
};

export type WaitingRoomResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['WaitingRoom'] = ResolversParentTypes['WaitingRoom']> = {
  eventId?: Resolver<ResolversTypes['ID'], ParentType, ContextType>;
  waiting?: Resolver<Array<ResolversTypes['WaitingEntry']>, ParentType, ContextType>;
};

export type Resolvers<ContextType = GraphQLContext> = {
  AdmitResult?: AdmitResultResolvers<ContextType>;
  AlphabetBucket?: AlphabetBucketResolvers<ContextType>;
  AuditBrokenLink?: AuditBrokenLinkResolvers<ContextType>;
  AuditChainReport?: AuditChainReportResolvers<ContextType>;
  AuditEntry?: AuditEntryResolvers<ContextType>;
  AuditPage?: AuditPageResolvers<ContextType>;
  BasicTenantInfo?: BasicTenantInfoResolvers<ContextType>;
  Contact?: ContactResolvers<ContextType>;
  ContactInfo?: ContactInfoResolvers<ContextType>;
  ContactPage?: ContactPageResolvers<ContextType>;
  ControlResult?: ControlResultResolvers<ContextType>;
  DenyResult?: DenyResultResolvers<ContextType>;
  EventFile?: EventFileResolvers<ContextType>;
  EventFilePage?: EventFilePageResolvers<ContextType>;
  FileItem?: FileItemResolvers<ContextType>;
  FilePage?: FilePageResolvers<ContextType>;
  Group?: GroupResolvers<ContextType>;
  LedgerConsent?: LedgerConsentResolvers<ContextType>;
  LedgerEntry?: LedgerEntryResolvers<ContextType>;
  LedgerPage?: LedgerPageResolvers<ContextType>;
  LockoutRules?: LockoutRulesResolvers<ContextType>;
  Me?: MeResolvers<ContextType>;
  MeetingSettings?: MeetingSettingsResolvers<ContextType>;
  Mutation?: MutationResolvers<ContextType>;
  MyNotice?: MyNoticeResolvers<ContextType>;
  OidcClientConfig?: OidcClientConfigResolvers<ContextType>;
  PinPolicy?: PinPolicyResolvers<ContextType>;
  PrivateServerConfig?: PrivateServerConfigResolvers<ContextType>;
  PrivateServerConfigQrCode?: PrivateServerConfigQrCodeResolvers<ContextType>;
  Query?: QueryResolvers<ContextType>;
  RecordingConsentAnswer?: RecordingConsentAnswerResolvers<ContextType>;
  SessionRules?: SessionRulesResolvers<ContextType>;
  TenantConfig?: TenantConfigResolvers<ContextType>;
  TenantFeatures?: TenantFeaturesResolvers<ContextType>;
  TenantSecurityRules?: TenantSecurityRulesResolvers<ContextType>;
  UploadConfig?: UploadConfigResolvers<ContextType>;
  WaitingEntry?: WaitingEntryResolvers<ContextType>;
  WaitingRoom?: WaitingRoomResolvers<ContextType>;
};

