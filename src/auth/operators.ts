import type { Caller } from "./caller";

/**
 * Operators: the callers allowed to do what moves tasks between deployments (ImportTask). With auth
 * off every caller is trusted (as for request authors); with auth on, a token whose subject is one
 * of PLAN_AUTH_OPERATOR_SUBJECTS (none by default). A list of subjects, not a claim: a token minted
 * for an agent can never make itself an operator, and the list is the deployment's, not the
 * identity provider's (docs/decisions/0011-task-export-import.md).
 */
export function isOperator(caller: Caller, operatorSubjects: ReadonlySet<string>): boolean {
  if (!caller.authenticated) return true;
  return caller.subject !== null && operatorSubjects.has(caller.subject);
}
