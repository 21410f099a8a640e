/** How many GraphQL operations a server has run compiled, from its /metrics (compiled-execution.ts). */
export async function compiledExecutions(serverUrl: string): Promise<number> {
  const text = await (await fetch(`${serverUrl}/metrics`)).text();
  const line = /^graphir_graphql_executions_total\{engine="compiled"\} (\d+)$/m.exec(text);
  return Number(line?.[1] ?? 0);
}
