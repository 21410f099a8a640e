/** The bot's latest executions, from their AuditEvents: outcome, duration, caller, trace id. */
import { useApp } from '../lib/app-context.js';
import { recentExecutions } from '../lib/bot-execution.js';
import { resourceHref } from '../lib/route.js';
import { useFetched } from '../lib/use-fetched.js';
import { Link } from './Link.js';
import { Loading } from './Loading.js';
import { When } from './When.js';

export interface BotExecutionsProps {
  readonly botId: string;
  /** Changes after each execution from the page, to read the list again. */
  readonly generation: number;
}

export function BotExecutions({ botId, generation }: BotExecutionsProps) {
  const { client } = useApp();
  const [fetched] = useFetched(() => recentExecutions(client, botId), [client, botId, generation]);
  return (
    <section className="panel" aria-labelledby="executions-heading">
      <h2 id="executions-heading">Recent executions</h2>
      <Loading fetched={fetched} what="executions">
        {(records) =>
          records.length === 0 ? (
            <p>No executions yet.</p>
          ) : (
            <div className="table-scroll" tabIndex={0} role="region" aria-label="Executions table">
              <table className="executions">
                <thead>
                  <tr>
                    <th scope="col">When</th>
                    <th scope="col">Outcome</th>
                    <th scope="col" className="number">
                      Duration
                    </th>
                    <th scope="col">Caller</th>
                    <th scope="col">Trace id</th>
                  </tr>
                </thead>
                <tbody>
                  {records.map((record) => (
                    <tr key={record.auditEventId ?? record.traceId}>
                      <td>
                        {record.auditEventId ? (
                          <Link href={resourceHref('AuditEvent', record.auditEventId)}>
                            <When instant={record.recorded} />
                          </Link>
                        ) : (
                          <When instant={record.recorded} />
                        )}
                      </td>
                      <td className={record.status === 'ok' ? 'status-ok' : 'status-failed'}>
                        {record.status}
                        {record.message && record.message !== record.status && (
                          <span className="detail">: {record.message}</span>
                        )}
                      </td>
                      <td className="number">
                        {record.durationMs === undefined ? '' : `${record.durationMs} ms`}
                      </td>
                      <td>
                        <code>{record.caller}</code>
                      </td>
                      <td>
                        <code className="trace-id">{record.traceId}</code>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Loading>
    </section>
  );
}
