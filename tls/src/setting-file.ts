import { readFileSync } from "node:fs";
import { ConfigError } from "./config-error";

/** A file a setting names: its path, and the setting, for error messages. */
export interface SettingFile {
  readonly path: string;
  readonly setting: string;
}

/** The file's bytes, or a ConfigError naming the setting and why the file cannot be read. */
export function readSettingFile(file: SettingFile): Buffer {
  try {
    return readFileSync(file.path);
  } catch (error) {
    const code = (error as { code?: string }).code ?? (error as Error).message;
    throw new ConfigError(`invalid configuration: ${file.setting} ${file.path} cannot be read (${code})`);
  }
}
