/**
 * tools/call requests (JSON-RPC lines, ids 1, 2, ...) whose arguments nest `depth` levels: the
 * arguments themselves an array, and a deep value under a declared and an undeclared argument.
 * Built as text: JSON.stringify of such a value would overflow this process's stack.
 */
export function deeplyNestedToolCalls(depth: number): string[] {
  const deep = "[".repeat(depth) + "]".repeat(depth);
  const call = (id: number, name: string, args: string) =>
    `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${name}","arguments":${args}}}`;
  return [
    call(1, "get_task_plan", deep),
    call(2, "update_task_plan", `{"mode":${deep},"content":"x"}`),
    call(3, "update_task_plan", `{"mode":"append","content":"x","extra":${deep}}`),
  ];
}
