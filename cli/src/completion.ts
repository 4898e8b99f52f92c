/** `devicelab completion bash|zsh`: scripts generated from the command tree, so they never fall behind it. */
import type { Command } from 'commander';

interface Node {
  path: string[];
  subcommands: string[];
  options: string[];
}

function walk(command: Command, path: string[] = []): Node[] {
  const options = command.options.flatMap((o) => [o.short, o.long].filter((x): x is string => Boolean(x)));
  const own: Node = { path, subcommands: command.commands.map((c) => c.name()), options: [...options, '--help'] };
  return [own, ...command.commands.flatMap((c) => walk(c, [...path, c.name()]))];
}

/** Shell `case` arms that follow the words typed so far down the command tree into `variable`. */
function pathArms(nodes: Node[], variable: string): string {
  return nodes.slice(1).map((n) => `      "${n.path.join(' ')}") ${variable}="${n.path.join(' ')}" ;;`).join('\n');
}

export function bashCompletion(program: Command): string {
  const nodes = walk(program);
  const globals = nodes[0].options.join(' ');
  const cases = nodes.map((node) => `    "${node.path.join(' ')}") words="${[...node.subcommands, ...node.options].join(' ')}" ;;`).join('\n');
  return `# devicelab bash completion: source <(devicelab completion bash)
_devicelab() {
  local cur path="" i w words
  cur="\${COMP_WORDS[COMP_CWORD]}"
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    [[ "$w" == -* ]] && continue
    case "\${path:+$path }$w" in
${pathArms(nodes, 'path')}
    esac
  done
  case "$path" in
${cases}
    *) words="${globals}" ;;
  esac
  COMPREPLY=( $(compgen -W "$words" -- "$cur") )
  [[ \${#COMPREPLY[@]} -eq 0 ]] && COMPREPLY=( $(compgen -f -- "$cur") )
}
complete -o default -F _devicelab devicelab
`;
}

export function zshCompletion(program: Command): string {
  const nodes = walk(program);
  const cases = nodes.map((node) => `    "${node.path.join(' ')}") candidates=(${[...node.subcommands, ...node.options].map((w) => `'${w}'`).join(' ')}) ;;`).join('\n');
  return `#compdef devicelab
# devicelab zsh completion: source <(devicelab completion zsh), or save as _devicelab in your $fpath
_devicelab() {
  local cmdpath="" w
  local -a candidates
  for w in \${words[2,CURRENT-1]}; do
    [[ "$w" == -* ]] && continue
    case "\${cmdpath:+$cmdpath }$w" in
${pathArms(nodes, 'cmdpath')}
    esac
  done
  case "$cmdpath" in
${cases}
  esac
  compadd -a candidates; _files
}
compdef _devicelab devicelab
`;
}
