import type { Command } from "commander";

/**
 * `planctl completion bash|zsh|fish`: completion scripts generated from the program's own command
 * tree, so they never drift from it (docs/decisions/0009-planctl-libraries.md says why no library).
 * Words complete; arguments fall back to file names.
 */
export type Shell = "bash" | "zsh" | "fish";

interface Node {
  readonly path: string; // "" for the program, "task" or "task create"
  readonly words: readonly string[]; // subcommands, then long options
}

function nodes(command: Command, prefix = ""): Node[] {
  const subcommands = command.commands.filter((sub) => sub.name() !== "help");
  const options = command.options.flatMap((option) => (option.long ? [option.long] : []));
  const words = [...subcommands.map((sub) => sub.name()), ...options, "--help"];
  return [
    { path: prefix, words },
    ...subcommands.flatMap((sub) => nodes(sub, prefix ? `${prefix} ${sub.name()}` : sub.name())),
  ];
}

// Command and option names are this program's own ([a-z-]), so they need no quoting. The words
// typed so far select the deepest command they name; its subcommands and options complete, and
// anything else (a task id, a file) falls back to file names.
function bash(program: Command): string {
  const all = nodes(program);
  const paths = all.filter(({ path }) => path !== "").map(({ path }) => `"${path}"`);
  const cases = all.map(({ path, words }) => `    "${path}") words="${words.join(" ")}" ;;`);
  return `# planctl completion for bash: source <(planctl completion bash)
_planctl() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path="" i words=""
  for ((i = 1; i < COMP_CWORD; i++)); do
    case "\${path:+$path }\${COMP_WORDS[i]}" in
      ${paths.join("|")}) path="\${path:+$path }\${COMP_WORDS[i]}" ;;
    esac
  done
  case "$path" in
${cases.join("\n")}
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
  [[ \${#COMPREPLY[@]} -eq 0 ]] && COMPREPLY=($(compgen -f -- "$cur"))
  return 0
}
complete -o filenames -F _planctl planctl
`;
}

function fish(program: Command): string {
  const lines = ["# planctl completion for fish: planctl completion fish | source", "complete -c planctl -f"];
  for (const { path, words } of nodes(program)) {
    const seen =
      path === "" ? "__fish_use_subcommand" : `__fish_seen_subcommand_from ${path.split(" ").pop()}`;
    for (const word of words) {
      const flag = word.startsWith("--") ? `-l ${word.slice(2)}` : `-a ${word}`;
      lines.push(`complete -c planctl -n '${seen}' ${flag}`);
    }
  }
  return `${lines.join("\n")}\n`;
}

/** The completion script for `shell`. */
export function completionScript(program: Command, shell: Shell): string {
  if (shell === "fish") return fish(program);
  if (shell === "bash") return bash(program);
  // zsh runs the bash script through its own bash-completion layer.
  return `# planctl completion for zsh: source <(planctl completion zsh)
autoload -U +X compinit && compinit
autoload -U +X bashcompinit && bashcompinit
${bash(program).split("\n").slice(1).join("\n")}`;
}
