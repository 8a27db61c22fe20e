import { type Command } from "commander";
import { type Context, contextsPath, readContexts, writeContexts } from "../contexts";
import { UsageError } from "../failures";
import { act, type Io, withOutputOption } from "../runtime";

/** What `context list` shows of a context: never a token, only where one comes from. */
const shownContext = (name: string, context: Context, current: string | null) => ({
  name,
  current: name === current,
  target: context.target,
  ca: context.ca ?? null,
  cert: context.cert ?? null,
  key: context.key ?? null,
  server_name: context.serverName ?? null,
  token: context.token
    ? "literal (hidden)"
    : context.tokenCommand
      ? `command: ${context.tokenCommand}`
      : "none",
});

/** `context add|use|list|remove`: saved connections in the user's config directory (mode 0600). */
export function addContextCommands(program: Command, io: Io): void {
  const context = program
    .command("context")
    .description("saved connections: target, TLS files, token source");
  const command = (name: string, description: string) =>
    withOutputOption(context.command(name).description(description));

  command("add", "save a context (the first one saved is made current)")
    .argument("<name>")
    .requiredOption("--target <host:port>", "the service's address")
    .option("--ca <file>", "CA bundle to check the server's certificate (TLS)")
    .option("--cert <file>", "client certificate (mTLS, with --key)")
    .option("--key <file>", "client key (mTLS, with --cert)")
    .option("--server-name <name>", "the name on the server's certificate, when not the target's host")
    .option("--token-command <cmd>", "a shell command printing a bearer token, run when one is needed")
    .option("--token <token>", "a literal bearer token, written to the file (prefer --token-command)")
    .action(
      act(io, async ({ out }, [name = ""], options) => {
        if ((options.cert === undefined) !== (options.key === undefined))
          throw new UsageError("--cert and --key go together");
        if (options.token !== undefined && options.tokenCommand !== undefined)
          throw new UsageError("give --token or --token-command, not both");
        const file = readContexts(io.env);
        const pick = (key: string) => (options[key] === undefined ? {} : { [key]: String(options[key]) });
        const saved: Context = {
          target: String(options.target),
          ...pick("ca"),
          ...pick("cert"),
          ...pick("key"),
          ...pick("serverName"),
          ...pick("tokenCommand"),
          ...pick("token"),
        };
        const current = file.current ?? name;
        writeContexts(io.env, { current, contexts: { ...file.contexts, [name]: saved } });
        if (out.json) return out.document(shownContext(name, saved, current));
        out.line(`context ${name} saved in ${contextsPath(io.env)}${current === name ? " (current)" : ""}`);
      }),
    );

  command("use", "make a saved context the current one")
    .argument("<name>")
    .action(
      act(io, async ({ out }, [name = ""]) => {
        const file = readContexts(io.env);
        if (!file.contexts[name]) throw new UsageError(`no context named "${name}"`);
        writeContexts(io.env, { ...file, current: name });
        if (out.json) return out.document({ current: name });
        out.line(`current context: ${name}`);
      }),
    );

  command("list", "the saved contexts (tokens never shown)").action(
    act(io, async ({ out }) => {
      const file = readContexts(io.env);
      const shown = Object.entries(file.contexts).map(([name, saved]) =>
        shownContext(name, saved, file.current),
      );
      if (out.json) return out.document({ path: contextsPath(io.env), contexts: shown });
      out.table(
        ["", "name", "target", "tls", "token"],
        shown.map((c) => [
          c.current ? "*" : "",
          c.name,
          c.target,
          c.ca || c.cert ? (c.cert ? "mtls" : "tls") : "",
          c.token,
        ]),
      );
    }),
  );

  command("remove", "delete a saved context")
    .argument("<name>")
    .action(
      act(io, async ({ out }, [name = ""]) => {
        const file = readContexts(io.env);
        if (!file.contexts[name]) throw new UsageError(`no context named "${name}"`);
        const { [name]: _removed, ...rest } = file.contexts;
        writeContexts(io.env, { current: file.current === name ? null : file.current, contexts: rest });
        if (out.json) return out.document({ removed: name });
        out.line(`context ${name} removed`);
      }),
    );
}
