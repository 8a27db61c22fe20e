import { createPrivateKey, X509Certificate } from "node:crypto";
import { createSecureContext } from "node:tls";
import { validityProblem, type ValidityProblem } from "./certificate-validity";
import { ConfigError } from "./config-error";
import { every } from "./every";
import { readSettingFile, type SettingFile } from "./setting-file";

/** The files a listener serves: certificate chain and key, and (for mTLS) the CA that signs clients. */
export interface TlsFilesConfig {
  readonly certFile: SettingFile;
  readonly keyFile: SettingFile;
  /** With a client CA, clients must present a certificate it signed (mTLS). */
  readonly clientCaFile: SettingFile | null;
}

/** What the watcher logs (a pino logger is one): a reload, and each distinct problem once. */
export interface TlsLogger {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

/** A checked certificate chain, its private key and (for mTLS) the CA bundle that signs clients. */
export interface TlsMaterial {
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly clientCa: Buffer | null;
  /** The leaf certificate's serial number and expiry, for logs. */
  readonly serial: string;
  readonly validTo: string;
}

/** What became of changed files: served, or refused (the material in use stays). */
export type TlsReloadOutcome = "reloaded" | "unusable" | ValidityProblem;

/** The material a listener serves now, and a way to hear of a rotated one. */
export interface TlsSource {
  current(): TlsMaterial;
  /** Calls `listener` with each new material that passed the checks; returns its removal. */
  onChange(listener: (material: TlsMaterial) => void): () => void;
  stop(): void;
}

/**
 * Serves the files' material and reads them again every `intervalMs` (Kubernetes and cert-manager
 * replace them in place). Changed files that pass the checks (a matching pair, valid now) replace
 * the material; changed files that fail keep the material in use and are checked again at every
 * pass (a certificate not valid yet is taken once it is), logging and counting (`onReload`) each
 * distinct problem once, so a bad rotation never takes a listener down. Throws a ConfigError when
 * the files are unusable at start, expired or not valid yet included.
 */
export function watchTlsFiles(
  files: TlsFilesConfig,
  intervalMs: number,
  logger: TlsLogger,
  onReload: (outcome: TlsReloadOutcome) => void = () => undefined,
): TlsSource {
  let raw = readRaw(files);
  let material = checked(files, raw);
  const listeners = new Set<(material: TlsMaterial) => void>();
  // Each distinct problem is logged (and counted) once, not at every pass while it lasts.
  let reported = "";
  const report = (problem: string, message: string, level: "warn" | "error", outcome?: TlsReloadOutcome) => {
    if (problem === reported) return;
    reported = problem;
    logger[level]({ reason: problem, serial: material.serial, validTo: material.validTo }, message);
    if (outcome) onReload(outcome);
  };
  const loop = every(intervalMs, async () => {
    let next: RawFiles;
    try {
      next = readRaw(files);
    } catch (error) {
      // A file briefly missing mid-rotation is not news unless it stays missing.
      return report((error as Error).message, "TLS files unreadable; keeping the certificate in use", "warn");
    }
    if (sameRaw(next, raw)) return;
    try {
      material = checked(files, next);
    } catch (error) {
      const problem = error instanceof CertificatePeriodError ? error.problem : null;
      return report(
        (error as Error).message,
        problem
          ? "TLS certificate expired or not valid yet; keeping the certificate in use"
          : "TLS files changed but are not usable; keeping the certificate in use",
        problem ? "warn" : "error",
        problem ?? "unusable",
      );
    }
    raw = next;
    reported = "";
    logger.info({ serial: material.serial, validTo: material.validTo }, "TLS certificate reloaded");
    onReload("reloaded");
    for (const listener of listeners) listener(material);
  });
  return {
    current: () => material,
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    stop: () => loop.stop(),
  };
}

interface RawFiles {
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly clientCa: Buffer | null;
}

function readRaw(files: TlsFilesConfig): RawFiles {
  return {
    cert: readSettingFile(files.certFile),
    key: readSettingFile(files.keyFile),
    clientCa: files.clientCaFile ? readSettingFile(files.clientCaFile) : null,
  };
}

const sameRaw = (a: RawFiles, b: RawFiles) =>
  a.cert.equals(b.cert) &&
  a.key.equals(b.key) &&
  (a.clientCa === null ? b.clientCa === null : b.clientCa !== null && a.clientCa.equals(b.clientCa));

function checked(files: TlsFilesConfig, raw: RawFiles): TlsMaterial {
  const leaf = parse(files.certFile, () => new X509Certificate(raw.cert), "is not a PEM certificate");
  const key = parse(files.keyFile, () => createPrivateKey(raw.key), "is not a PEM private key");
  const problem = validityProblem(new Date(leaf.validFrom), new Date(leaf.validTo), new Date());
  if (problem) {
    throw new CertificatePeriodError(
      `invalid configuration: ${files.certFile.setting} ${files.certFile.path} ${problem === "expired" ? `expired on ${leaf.validTo}` : `is not valid before ${leaf.validFrom}`}`,
      problem,
    );
  }
  if (!leaf.checkPrivateKey(key)) {
    throw new ConfigError(
      `invalid configuration: ${files.keyFile.setting} is not the key of the certificate in ${files.certFile.setting}`,
    );
  }
  if (files.clientCaFile && raw.clientCa) {
    const caFile = files.clientCaFile;
    parse(caFile, () => new X509Certificate(raw.clientCa ?? ""), "is not a PEM certificate bundle");
    parse(
      caFile,
      () => createSecureContext({ ca: raw.clientCa ?? undefined }),
      "is not a PEM certificate bundle",
    );
  }
  parse(files.certFile, () => createSecureContext({ cert: raw.cert, key: raw.key }), "cannot be served");
  return {
    cert: raw.cert,
    key: raw.key,
    clientCa: raw.clientCa,
    serial: leaf.serialNumber,
    validTo: leaf.validTo,
  };
}

function parse<T>(file: SettingFile, read: () => T, problem: string): T {
  try {
    return read();
  } catch (error) {
    throw new ConfigError(
      `invalid configuration: ${file.setting} ${file.path} ${problem} (${(error as Error).message})`,
    );
  }
}

/** The certificate is outside its validity period (at start: the start fails; later: not loaded). */
class CertificatePeriodError extends ConfigError {
  constructor(
    message: string,
    readonly problem: ValidityProblem,
  ) {
    super(message);
  }
}
