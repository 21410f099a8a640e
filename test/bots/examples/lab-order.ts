// An integration bot: a ServiceRequest in; the order sent to a lab's HTTP API (its address and
// key are project secrets) with a time limit; the lab's order number kept on the ServiceRequest.
import type { BotEvent, MedplumClient } from '@medplum/core';
import type { ServiceRequest } from '@medplum/fhirtypes';

const LAB_ORDER_SYSTEM = 'urn:example:lab:order';
const TIME_LIMIT_MS = 2000;

export async function handler(
  medplum: MedplumClient,
  event: BotEvent<ServiceRequest>,
): Promise<ServiceRequest> {
  const request = event.input;
  const labUrl = event.secrets['LAB_API_URL']?.valueString;
  const labKey = event.secrets['LAB_API_KEY']?.valueString;
  if (!labUrl || !labKey)
    throw new Error('The project secrets LAB_API_URL and LAB_API_KEY are not set');

  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), TIME_LIMIT_MS);
  let response: Response;
  try {
    response = await fetch(new URL('orders', labUrl.endsWith('/') ? labUrl : `${labUrl}/`), {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${labKey}` },
      body: JSON.stringify({
        patient: request.subject?.reference,
        test: request.code?.coding?.[0]?.code,
      }),
      signal: controller.signal,
    });
  } catch (error) {
    throw new Error(
      controller.signal.aborted
        ? `The lab did not answer within ${TIME_LIMIT_MS} ms`
        : `The lab could not be reached: ${(error as Error).message}`,
    );
  } finally {
    clearTimeout(timer);
  }
  if (!response.ok)
    throw new Error(`The lab refused the order: ${response.status} ${await response.text()}`);
  const { orderNumber } = (await response.json()) as { orderNumber: string };
  return medplum.updateResource({
    ...request,
    status: 'active',
    identifier: [...(request.identifier ?? []), { system: LAB_ORDER_SYSTEM, value: orderNumber }],
  });
}
