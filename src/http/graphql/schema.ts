/**
 * The GraphQL schema (SDL). docs/api/schema.graphql is this schema printed; a test keeps them equal.
 * Served at POST /graphql on tenant hosts (docs/decisions/202-graphql-endpoint.md).
 */
export const typeDefs = /* GraphQL */ `
  "Current user and permissions."
  type Me {
    id: ID!
    username: String!
    displayName: String!
    email: String
    role: String!
    kind: String!
    tenant: String!
    permissions: [String!]!
    scheme: String!
    impersonatedBy: ID
    purpose: String
    "The user's own contact card (presence, avatar, profile fields)."
    contact: ContactInfo!
  }

  "A contact as lists show it, merged with presence and the caller's favourite mark."
  type Contact {
    id: ID!
    username: String!
    displayName: String!
    initial: String!
    kind: String!
    title: String
    department: String
    avatarUrl: String
    online: Boolean!
    favourite: Boolean!
  }

  "A full contact card."
  type ContactInfo {
    id: ID!
    username: String!
    displayName: String!
    initial: String!
    kind: String!
    title: String
    department: String
    avatarUrl: String
    online: Boolean!
    favourite: Boolean!
    firstName: String
    lastName: String
    email: String
    phone: String
    role: String!
    lastSeenAt: String
  }

  type ContactPage {
    items: [Contact!]!
    total: Int!
    skip: Int!
    take: Int!
  }

  "An alphabet bucket of the contact index (A-Z or #) and how many contacts it holds."
  type AlphabetBucket {
    letter: String!
    count: Int!
  }

  "A contact group (GroupInfo)."
  type Group {
    id: ID!
    name: String!
    ownerId: ID!
    owner: Contact
    participantCount: Int!
    participants: [Contact!]!
  }

  type MyNotice {
    id: ID!
    title: String!
    body: String!
    severity: String!
    createdAt: String!
    seen: Boolean!
    seenAt: String
  }

  type UploadConfig {
    maxBytes: Float!
    allowedExtensions: [String!]!
    maxImagePixels: Float!
  }

  type TenantFeatures {
    recording: Boolean!
    chat: Boolean!
    rapidConnect: Boolean!
    guestJoin: Boolean!
  }

  type MeetingSettings {
    ringTimeoutSeconds: Int!
    heartbeatSeconds: Int!
    "Meetings open with a waiting room unless the event says otherwise."
    waitingRoom: Boolean!
    "Participants invited on the event skip the waiting room."
    waitingRoomAutoAdmitInvited: Boolean!
    "How long a waiting entry lasts before it expires."
    waitingRoomExpirySeconds: Int!
    "Recording consent: off, all (every person present) or patients (the patients only)."
    recordingConsent: String!
    "How long a recording consent request waits for answers before it is cancelled."
    recordingConsentTimeoutSeconds: Int!
  }

  "Tenant runtime configuration."
  type TenantConfig {
    tenant: String!
    displayName: String!
    locale: String!
    timezone: String!
    uploads: UploadConfig!
    features: TenantFeatures!
    meetings: MeetingSettings!
  }

  "Someone waiting for a host's admission."
  type WaitingEntry {
    userId: ID!
    name: String!
    "person or device"
    kind: String!
    "participant, guest or device"
    role: String!
    "On the event's participant list, as opposed to a guest by code."
    invited: Boolean!
    since: String!
    position: Int!
    "denied or removed before, when coming back"
    returning: String
  }

  type WaitingRoom {
    eventId: ID!
    waiting: [WaitingEntry!]!
  }

  type BasicTenantInfo {
    name: String!
    displayName: String!
    baseUrl: String!
    realm: String!
  }

  type OidcClientConfig {
    issuer: String!
    clientId: String!
  }

  "Private-server (standalone) onboarding configuration."
  type PrivateServerConfig {
    version: Int!
    tenant: String!
    displayName: String!
    baseUrl: String!
    graphqlUrl: String!
    hubUrl: String!
    oidc: OidcClientConfig!
    "The whole configuration as the JSON text the QR code carries."
    json: String!
  }

  type PrivateServerConfigQrCode {
    "PNG image as a data: URL."
    dataUrl: String!
    config: PrivateServerConfig!
  }

  type PinPolicy {
    minLength: Int!
    maxLength: Int!
    digitsOnly: Boolean!
    historyCount: Int!
  }

  type LockoutRules {
    "Failed PINs from one client address before that address is locked."
    maxAttempts: Int!
    "First lock of an address; each further lock that day doubles it."
    lockoutSeconds: Int!
    "Cap of the doubling."
    maxLockoutSeconds: Int!
    "Failed PINs of the account per day, from all addresses, before PIN sign-in is locked until the PIN is reset."
    maxFailuresPerDay: Int!
  }

  type SessionRules {
    accessTokenTtlSeconds: Int!
    refreshTokenTtlSeconds: Int!
    offlineTokenTtlDays: Int!
    maxSessionsPerUser: Int!
  }

  type TenantSecurityRules {
    pin: PinPolicy!
    lockout: LockoutRules!
    session: SessionRules!
    loginCodeTtlSeconds: Int!
  }

  enum ContactSortType {
    NAME
    FAVOURITES_FIRST
  }

  input PagingInput {
    skip: Int = 0
    take: Int = 20
  }

  type Query {
    me: Me!
    tenantConfig: TenantConfig!
    basicTenantInfo: BasicTenantInfo!
    generatePrivateServerConfig: PrivateServerConfig!
    generatePrivateServerConfigQrCode: PrivateServerConfigQrCode!
    tenantSecurityRules: TenantSecurityRules!
    "Contact list. isCallList ranks contacts by recent calls and meetings; take is clamped to PAGE_MAX_TAKE."
    myContacts(
      sortType: ContactSortType = NAME
      paging: PagingInput
      alphabet: String
      isCallList: Boolean = false
    ): ContactPage!
    contactAlphabets: [AlphabetBucket!]!
    groupById(groupId: ID!): Group!
    "The meeting's waiting queue in arrival order (hosts of the event)."
    waitingRoom(eventId: ID!): WaitingRoom!
    "The consultation's ledger in join order (hosts of the event and tenant administrators); take is clamped to PAGE_MAX_TAKE."
    eventLedger(eventId: ID!, paging: PagingInput): LedgerPage!
    "The event's files: uploaded for it, its recordings and attachments, newest first (members of the event)."
    eventFiles(eventId: ID!, paging: PagingInput): EventFilePage!
    "A call session's files, newest first (the call's members see all, anyone else their own uploads)."
    sessionFiles(sessionId: String!, paging: PagingInput): FilePage!
    hasPin: Boolean!
    myNotice: MyNotice
    "The tenant's audit trail, newest first, filtered; needs audit:read (docs/audit.md)."
    auditTrail(filter: AuditFilter): AuditPage!
    "Verifies the tenant's audit trail against its signed checkpoints and names the first entry that fails; needs audit:read."
    auditVerify: AuditChainReport!
  }

  "A row of a consultation's ledger: who was there, when, for how long, from which device."
  type LedgerEntry {
    "Identity in the conference room (user id, device:<id> or guest:<id>)."
    participantKey: String!
    userId: ID
    displayName: String
    "The client the participant joined from, as the conferencing system reported it."
    device: String
    "The headset, when the participant is a device attached to the event."
    deviceId: ID
    joinedAt: String!
    leftAt: String
    durationSeconds: Int!
    conferenceId: String!
    "This participant's answers to recording consent requests, oldest first."
    recordingConsents: [LedgerConsent!]!
  }

  "A recording consent answer kept on a ledger row (decision 910)."
  type LedgerConsent {
    requestId: String!
    consent: Boolean!
    at: String!
    "Answered on joining while the recording ran."
    late: Boolean!
  }

  type LedgerPage {
    items: [LedgerEntry!]!
    total: Int!
    skip: Int!
    take: Int!
  }

  "A stored file; url and thumbnailUrl are the download routes, relative to the tenant host."
  type FileItem {
    id: ID!
    fileName: String!
    size: Float!
    contentType: String!
    "image, video, audio, document, recording or other"
    kind: String!
    ownerId: ID!
    eventId: ID
    sessionId: String
    hash: String!
    url: String!
    "none, pending, ready or failed"
    thumbnailStatus: String!
    thumbnailUrl: String
    width: Int
    height: Int
    createdAt: String
  }

  "A file of an event and how it belongs there: the fields of FileItem (as REST's EventFile has them), plus source and attached."
  type EventFile {
    file: FileItem! @deprecated(reason: "The file's fields are on EventFile itself, as in REST; read them there.")
    id: ID!
    fileName: String!
    size: Float!
    contentType: String!
    "image, video, audio, document, recording or other"
    kind: String!
    ownerId: ID!
    eventId: ID
    sessionId: String
    hash: String!
    url: String!
    "none, pending, ready or failed"
    thumbnailStatus: String!
    thumbnailUrl: String
    width: Int
    height: Int
    createdAt: String
    "recording, upload or attachment"
    source: String!
    "On the event's attachment list."
    attached: Boolean!
  }

  type EventFilePage {
    items: [EventFile!]!
    total: Int!
    skip: Int!
    take: Int!
  }

  type FilePage {
    items: [FileItem!]!
    total: Int!
    skip: Int!
    take: Int!
  }

  "Filter and page of an audit trail read; every field narrows. before: the next of the previous page."
  input AuditFilter {
    action: String
    actorId: ID
    subjectId: ID
    "The consultation (event)."
    eventId: ID
    "ISO 8601: entries at or after this time."
    from: String
    "ISO 8601: entries before this time."
    to: String
    before: Int
    "At most 500 (default 50)."
    take: Int
  }

  "An entry of the tamper-evident audit trail."
  type AuditEntry {
    "Position in the tenant's chain, from 1, without gaps."
    seq: Int!
    id: ID!
    createdAt: String!
    action: String!
    outcome: String!
    actorId: ID
    subjectId: ID
    eventId: ID
    ip: String
    "The entry's details as JSON."
    details: String
    prev: String!
    hash: String!
  }

  type AuditPage {
    items: [AuditEntry!]!
    "Pass as filter.before for the next (older) page."
    next: Int
  }

  type AuditBrokenLink {
    "The first entry that cannot be shown to be what was signed."
    seq: Int!
    "gap, prev_mismatch, hash_mismatch, missing, not_signed, checkpoint_invalid or unsigned (docs/audit.md)"
    reason: String!
    expected: String!
    found: String!
  }

  type AuditChainReport {
    ok: Boolean!
    verified: Int!
    "Entries 1..covered are verified and covered by the signed checkpoints."
    covered: Int!
    headSeq: Int!
    headHash: String!
    firstBroken: AuditBrokenLink
    "What fails, naming the entry."
    message: String
  }
  "The answer of every host control of a meeting (decision 900): its control state after it."
  type ControlResult {
    eventId: ID!
    "The meetingEvent sequence number after the control."
    seq: Int!
    locked: Boolean!
    ended: Boolean!
    "Hosts in the meeting now."
    hosts: [ID!]!
    "Members in the meeting now."
    members: [ID!]!
    "Whom the control acted on (the event id for lock/unlock); empty when it changed nothing."
    affected: [ID!]!
  }

  "What a mute request asks the member's client to mute."
  enum MuteMedia {
    audio
    video
    both
  }

  "What admit answers: the queue after it, and whom it admitted."
  type AdmitResult {
    eventId: ID!
    waiting: [WaitingEntry!]!
    admitted: [ID!]!
  }

  "What deny answers: the queue after it, and whom it denied."
  type DenyResult {
    eventId: ID!
    waiting: [WaitingEntry!]!
    denied: [ID!]!
  }

  """
  The waiting room's decisions (decision 870) and the host controls of a meeting (docs/meetings.md,
  decision 900): the same turns of the meeting actor as the hub methods and REST routes of the same
  names; hosts of the meeting only. A repeated requestId answers the first result and applies once.
  """
  type Mutation {
    "Waiting room (decision 870): admit one entry (userId) or all; the admitted get their join details by the waitingRoom push."
    admit(eventId: ID!, userId: ID, all: Boolean, requestId: String): AdmitResult!
    "Waiting room: deny one entry (userId) or all, with an optional message; they must be admitted to come back."
    deny(eventId: ID!, userId: ID, all: Boolean, message: String, requestId: String): DenyResult!
    "Take a member out of the meeting; they come back only when a host admits them again."
    removeParticipant(eventId: ID!, userId: ID!, reason: String, requestId: String): ControlResult!
    "End the meeting for everyone: every socket leaves, the VCS room closes, the event is ended."
    endMeeting(eventId: ID!, reason: String, requestId: String): ControlResult!
    "New joins wait in the waiting room, or are refused (meeting_locked) without one."
    lockMeeting(eventId: ID!, requestId: String): ControlResult!
    unlockMeeting(eventId: ID!, requestId: String): ControlResult!
    "Hand the host role to a member; the caller stops being a host of this meeting."
    transferHost(eventId: ID!, userId: ID!, requestId: String): ControlResult!
    "Make a member one more host of this meeting."
    addHost(eventId: ID!, userId: ID!, requestId: String): ControlResult!
    "Ask a member's client to mute (the muteRequested push)."
    muteRequest(eventId: ID!, userId: ID!, media: MuteMedia, message: String, requestId: String): ControlResult!
    "Answer a member's requestHostAccess: grant (they become a host) or refuse; they are told."
    answerHostAccess(eventId: ID!, userId: ID!, grant: Boolean!, message: String, requestId: String): ControlResult!
    "Answer a recording consent request (recordingConsentRequested) with yes or no, once (decision 910)."
    consentToRecording(eventId: ID!, requestId: String!, consent: Boolean!): RecordingConsentAnswer!
  }

  "The state of a recording consent request after an answer (decision 910)."
  type RecordingConsentAnswer {
    eventId: ID!
    requestId: String!
    "pending, granted, refused or timedOut"
    state: String!
    consent: Boolean!
    "A joiner held while the recording runs entered the meeting (its join details come by the waitingRoom push)."
    entered: Boolean!
  }
`;
