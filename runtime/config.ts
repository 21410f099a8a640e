/** Server configuration from the environment; see the README's configuration table. */
export interface Config {
  readonly port: number;
  readonly host: string;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return {
    port: parsePort(env.PORT ?? '8080'),
    host: env.HOST ?? '0.0.0.0',
  };
}

function parsePort(text: string): number {
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`PORT must be a whole number from 0 to 65535, not "${text}"`);
  }
  return port;
}
