import { afterAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

interface JavaRuntime {
  java: string;
  javac: string | null;
  release: number;
}
// @ts-expect-error plain ESM script without types
const services = (await import('../../../scripts/services.mjs')) as {
  resolveMongoJava(opts: { env?: Record<string, string | undefined>; jvmDir?: string }): JavaRuntime;
  mongoJavaRuntime(): JavaRuntime;
  mongoJavaGcOptions(release: number, jvmOptions?: string[]): string[];
  pomJars(pom?: string): string[];
  installMongoJavaServer(lib: string): void;
  mongoJavaServerCommand(backend: string, port: number, file?: string): [string, string[]];
};

/**
 * Which Java runs the embedded database and with which collector (decision 1152): the newest JDK of
 * release 21 or later in the JVM directory unless one is named, generational ZGC from 21.
 */
describe('the Java of the embedded database (scripts/services.mjs)', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'jvm-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** A JDK directory whose `release` file names `version`, or whose java prints it when `release` is false. */
  const jdk = (name: string, version: string, opts: { release?: boolean; javac?: boolean } = {}) => {
    const home = path.join(dir, 'jvm', name);
    mkdirSync(path.join(home, 'bin'), { recursive: true });
    const java = path.join(home, 'bin', 'java');
    writeFileSync(java, `#!/bin/sh\necho 'openjdk version "${version}" 2026-01-20' >&2\n`);
    chmodSync(java, 0o755);
    if (opts.release !== false)
      writeFileSync(path.join(home, 'release'), `IMPLEMENTOR="Test"\nJAVA_VERSION="${version}"\n`);
    if (opts.javac) {
      writeFileSync(path.join(home, 'bin', 'javac'), '#!/bin/sh\n');
      chmodSync(path.join(home, 'bin', 'javac'), 0o755);
    }
    return { home, java };
  };
  const jdk17 = jdk('java-17-openjdk-amd64', '17.0.15');
  const jdk21 = jdk('jdk-21', '21.0.7');
  const jdk25 = jdk('temurin-25-jdk-amd64', '25.0.3', { javac: true });
  const jvmDir = path.join(dir, 'jvm');

  it('takes the newest JDK of release 21 or later in the directory, with the javac beside it', () => {
    expect(services.resolveMongoJava({ env: {}, jvmDir })).toEqual({
      java: jdk25.java,
      javac: jdk25.java + 'c',
      release: 25,
    });
  });

  it('reads the release from `java -version` when the JDK has no release file', () => {
    const jdk26 = jdk('jdk-26-no-release', '26.0.1', { release: false });
    try {
      expect(services.resolveMongoJava({ env: {}, jvmDir })).toMatchObject({ java: jdk26.java, release: 26 });
    } finally {
      rmSync(jdk26.home, { recursive: true, force: true });
    }
  });

  it('runs the Java it is given: LOCAL_MONGO_JAVA first, then JAVA_HOME', () => {
    expect(
      services.resolveMongoJava({ env: { LOCAL_MONGO_JAVA: jdk17.java, JAVA_HOME: jdk21.home }, jvmDir }),
    ).toMatchObject({
      java: jdk17.java,
      release: 17,
    });
    expect(services.resolveMongoJava({ env: { JAVA_HOME: jdk21.home }, jvmDir })).toMatchObject({
      java: jdk21.java,
      release: 21,
    });
  });

  it('falls back to the java on PATH when no JDK of release 21 or later is installed', () => {
    const old = path.join(dir, 'old');
    mkdirSync(old, { recursive: true });
    expect(services.resolveMongoJava({ env: {}, jvmDir: old }).java).toBe('java');
    expect(services.resolveMongoJava({ env: {}, jvmDir: path.join(dir, 'absent') }).java).toBe('java');
  });

  it('collects with generational ZGC from release 21, with compact headers from 25, unless a collector is named', () => {
    expect(services.mongoJavaGcOptions(17)).toEqual([]);
    expect(services.mongoJavaGcOptions(21)).toEqual(['-XX:+UseZGC', '-XX:+ZGenerational']);
    expect(services.mongoJavaGcOptions(24)).toEqual(['-XX:+UseZGC']);
    expect(services.mongoJavaGcOptions(25)).toEqual(['-XX:+UseZGC', '-XX:+UseCompactObjectHeaders']);
    expect(services.mongoJavaGcOptions(25, ['-Dmongo.h2.keyBytes=h2'])).toEqual([
      '-XX:+UseZGC',
      '-XX:+UseCompactObjectHeaders',
    ]);
    expect(services.mongoJavaGcOptions(25, ['-XX:+UseG1GC'])).toEqual([]);
  });

  it('starts this machine’s chosen Java with the options chosen for it', () => {
    const { java, release } = services.mongoJavaRuntime();
    const r = spawnSync(java, [...services.mongoJavaGcOptions(release), '-version'], { encoding: 'utf8' });
    expect({ status: r.status, stderr: r.status ? r.stderr : '' }).toEqual({ status: 0, stderr: '' });
    expect(r.stderr).toContain(`version "${release}`);
  });
});

/** The embedded database's jars (decision 1155): the pom's, and only those, on the server's classpath. */
describe('the jars of the embedded database (scripts/services.mjs)', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'mjs-lib-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const h2 = (lib: string) => readdirSync(lib).filter((f) => /^h2-[\d.]+\.jar$/.test(f));

  it('names H2 2.5.252 over the backend’s own, and the server runs on exactly the pom’s H2', () => {
    const want = services.pomJars();
    expect(want).toEqual(expect.arrayContaining(['h2-2.5.252.jar', 'mongo-java-server-h2-backend-1.46.0.jar']));
    expect(want.some((j) => j.startsWith('mongo-java-server-runner'))).toBe(false);
    const [, args] = services.mongoJavaServerCommand('h2', 1, path.join(dir, 'probe.mv'));
    const cp = args[args.indexOf('-cp') + 1]!;
    const lib = path.dirname(cp.split(':')[0]!);
    expect(h2(lib)).toEqual(['h2-2.5.252.jar']);
  });

  it('replaces a lib of an earlier pom whole: no second H2 beside the new one', () => {
    const lib = path.join(dir, 'lib');
    mkdirSync(lib, { recursive: true });
    for (const jar of ['h2-2.3.232.jar', 'mongo-java-server-h2-backend-1.46.0.jar'])
      writeFileSync(path.join(lib, jar), '');
    services.installMongoJavaServer(lib);
    expect(h2(lib)).toEqual(['h2-2.5.252.jar']);
    expect(services.pomJars().every((j) => existsSync(path.join(lib, j)))).toBe(true);
    // A complete lib is left as it is.
    writeFileSync(path.join(lib, 'marker'), '');
    services.installMongoJavaServer(lib);
    expect(existsSync(path.join(lib, 'marker'))).toBe(true);
  }, 120_000);
});
