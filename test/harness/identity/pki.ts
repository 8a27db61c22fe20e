import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { requireBinary } from "../servers/processes";

/** A PEM certificate and its key, as files. */
export interface CertFiles {
  readonly certFile: string;
  readonly keyFile: string;
  /** The certificate's serial number, upper-case hex as Node's X509Certificate reports it. */
  readonly serial: string;
}

/** A test certificate authority made with the openssl command line (P-256 keys, valid 2 days). */
export interface TestCa extends CertFiles {
  /**
   * A leaf certificate signed by this CA for `names` (IP addresses or DNS names, as SANs), valid 2
   * days from now or over `validity` (openssl dates, `YYYYMMDDHHMMSSZ`: an expired or future one).
   */
  issue(
    name: string,
    options?: { names?: readonly string[]; uri?: string; validity?: { from: string; to: string } },
  ): CertFiles;
  pem(): Buffer;
}

function openssl(args: readonly string[]): void {
  execFileSync("openssl", args, { stdio: ["ignore", "ignore", "pipe"] });
}

// 8 bytes, the first below 0x80 and not 0, so every reader prints it the same way (no sign byte, no padding).
const serialHex = () => `4${randomBytes(7).toString("hex").toUpperCase()}A`;

// A new P-256 key, unencrypted, written to `keyFile` (openssl req's arguments).
const newKey = (keyFile: string) => [
  "-newkey",
  "ec",
  "-pkeyopt",
  "ec_paramgen_curve:prime256v1",
  "-nodes",
  "-keyout",
  keyFile,
];

/** Makes a CA named `name` in `dir`. */
export function makeCa(dir: string, name: string): TestCa {
  requireBinary("openssl", "openssl");
  const certFile = join(dir, `${name}.crt`);
  const keyFile = join(dir, `${name}.key`);
  const serial = serialHex();
  openssl([
    "req",
    "-x509",
    ...newKey(keyFile),
    "-out",
    certFile,
    "-days",
    "2",
    "-subj",
    `/CN=${name}`,
    "-set_serial",
    `0x${serial}`,
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign",
  ]);
  return {
    certFile,
    keyFile,
    serial,
    pem: () => readFileSync(certFile),
    issue(leaf, options = {}) {
      const names = options.names ?? ["127.0.0.1", "localhost"];
      const leafCert = join(dir, `${leaf}.crt`);
      const leafKey = join(dir, `${leaf}.key`);
      const csr = join(dir, `${leaf}.csr`);
      const extensions = join(dir, `${leaf}.ext`);
      const sans = [
        ...names.map((n) => (/^[\d.]+$|:/.test(n) ? `IP:${n}` : `DNS:${n}`)),
        ...(options.uri ? [`URI:${options.uri}`] : []),
      ];
      writeFileSync(
        extensions,
        `subjectAltName=${sans.join(",")}\nextendedKeyUsage=serverAuth,clientAuth\nbasicConstraints=CA:FALSE\n`,
      );
      const leafSerial = serialHex();
      openssl(["req", "-new", ...newKey(leafKey), "-out", csr, "-subj", `/CN=${leaf}`]);
      if (options.validity) signWithin(dir, leaf, { certFile, keyFile }, leafSerial, options.validity);
      else {
        openssl([
          "x509",
          "-req",
          "-in",
          csr,
          "-CA",
          certFile,
          "-CAkey",
          keyFile,
          "-set_serial",
          `0x${leafSerial}`,
          "-days",
          "2",
          "-extfile",
          extensions,
          "-out",
          leafCert,
        ]);
      }
      return { certFile: leafCert, keyFile: leafKey, serial: leafSerial };
    },
  };
}

// `openssl x509 -req` (OpenSSL 3.0) takes only a number of days from now; `openssl ca` takes dates.
function signWithin(
  dir: string,
  leaf: string,
  ca: { certFile: string; keyFile: string },
  serial: string,
  validity: { from: string; to: string },
): void {
  const config = join(dir, `${leaf}.ca.cnf`);
  writeFileSync(join(dir, `${leaf}.index`), "");
  writeFileSync(join(dir, `${leaf}.serial`), `${serial}\n`);
  writeFileSync(
    config,
    [
      "[ca]",
      "default_ca = test",
      "[test]",
      `database = ${join(dir, `${leaf}.index`)}`,
      `serial = ${join(dir, `${leaf}.serial`)}`,
      `new_certs_dir = ${dir}`,
      "default_md = sha256",
      "policy = any",
      "unique_subject = no",
      "[any]",
      "commonName = supplied",
      "[leaf]",
      ...readFileSync(join(dir, `${leaf}.ext`), "utf8")
        .trim()
        .split("\n"),
      "",
    ].join("\n"),
  );
  openssl([
    "ca",
    "-batch",
    "-notext",
    "-config",
    config,
    "-cert",
    ca.certFile,
    "-keyfile",
    ca.keyFile,
    "-in",
    join(dir, `${leaf}.csr`),
    "-out",
    join(dir, `${leaf}.crt`),
    "-startdate",
    validity.from,
    "-enddate",
    validity.to,
    "-extensions",
    "leaf",
  ]);
}
