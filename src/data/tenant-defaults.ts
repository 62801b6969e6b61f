/** Runtime configuration a new tenant starts with; tenant admins change it afterwards. */
export function defaultSettings(displayName: string) {
  return {
    _id: 'tenant',
    displayName,
    locale: 'en',
    timezone: 'UTC',
    uploads: {
      maxBytes: 100 * 1024 * 1024,
      allowedExtensions: [
        'jpg',
        'jpeg',
        'png',
        'gif',
        'webp',
        'pdf',
        'mp4',
        'mp3',
        'wav',
        'txt',
        'csv',
        'xlsx',
        'docx',
      ],
      maxImagePixels: 50_000_000,
    },
    security: {
      pin: { minLength: 4, maxLength: 8, digitsOnly: true, historyCount: 3 },
      lockout: { maxAttempts: 5, lockoutSeconds: 300, maxLockoutSeconds: 3600, maxFailuresPerDay: 20 },
      session: {
        accessTokenTtlSeconds: 300,
        refreshTokenTtlSeconds: 43_200,
        offlineTokenTtlDays: 7,
        maxSessionsPerUser: 20,
      },
      loginCodeTtlSeconds: 120,
    },
    features: { recording: true, chat: true, rapidConnect: true, guestJoin: true },
    /**
     * Waiting room (decision 870): off by default so existing clients join as before; when on, patients,
     * guests and headsets wait for a host's admission; invited ones are let in when autoAdmitInvited.
     */
    meetings: {
      ringTimeoutSeconds: 45,
      heartbeatSeconds: 15,
      waitingRoom: false,
      waitingRoomAutoAdmitInvited: true,
      waitingRoomExpirySeconds: 900,
      /** Recording consent (decision 910): off by default; `all` or `patients` makes startRecording ask first. */
      recordingConsent: 'off' as 'off' | 'all' | 'patients',
      recordingConsentTimeoutSeconds: 120,
    },
    /** Browser origins (scheme://host[:port]) allowed to call this tenant's API besides CORS_ORIGINS. */
    cors: { allowedOrigins: [] as string[] },
    /** The tenant's own web app pages (sign-in redirect URI, QR approval page); null = the deployment's setting or the service's pages. */
    webApp: { signInRedirectUri: null as string | null, loginApproveUrl: null as string | null },
    /** Patients see their care team (people of their events and groups) unless set to 'tenant' (decision 230). */
    directory: { patientScope: 'careTeam' as 'careTeam' | 'tenant' },
  };
}

export const DEFAULT_PERIPHERAL_TYPES = [
  { key: 'headset', name: 'Headset', capabilities: ['video', 'audio', 'display', 'remote-control'] },
  { key: 'camera', name: 'Camera', capabilities: ['video', 'zoom', 'pan', 'tilt'] },
  { key: 'usb-stethoscope', name: 'USB stethoscope', capabilities: ['audio', 'recording'] },
  { key: 'otoscope', name: 'Otoscope', capabilities: ['video', 'still'] },
];
