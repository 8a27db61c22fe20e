/**
 * @taskplans/tls: what the service and the MCP server share to serve TLS. The certificate files a
 * listener serves, checked (a matching pair, valid now) and read again as they rotate
 * (watchTlsFiles), an HTTPS server that follows them, and what that rests on: reading a file a
 * setting names, the error that names the setting (ConfigError), the one for an address that cannot
 * be listened on (ListenError), and the non-overlapping timer of the reload (every).
 */
export { validityProblem, type ValidityProblem } from "./certificate-validity";
export { ConfigError } from "./config-error";
export { every } from "./every";
export { httpsServer } from "./https-server";
export { ListenError } from "./listen-error";
export { readSettingFile, type SettingFile } from "./setting-file";
export {
  type TlsFilesConfig,
  type TlsLogger,
  type TlsMaterial,
  type TlsReloadOutcome,
  type TlsSource,
  watchTlsFiles,
} from "./tls-files";
