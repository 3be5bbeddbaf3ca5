/**
 * A status's `controls` as the daemon computes them (src/supervisor/instance.ts), from a real instance machine
 * driven into a state: what the dashboard's buttons read, taken from the machine rather than written by hand.
 */
import type { ControlFacts } from '../../../machines/instance.refusals.ts';
import { controlChoices } from '../../../src/supervisor/instance.ts';
import type { InstanceStatus } from '../../../src/supervisor/status.ts';
import { createHarness, type Harness } from '../../machines/_support/harness.ts';

/** The state the machine reached and its `controls`, with an update provider and a previous build unless told. */
export async function machineControls(
  drive: (h: Harness) => Promise<void> | void,
  facts: ControlFacts = { canUpdate: true, canRollback: true },
): Promise<Pick<InstanceStatus, 'state' | 'canUpdate' | 'canRollback'> & Required<Pick<InstanceStatus, 'controls'>>> {
  const h = createHarness();
  try {
    await drive(h);
    return { state: h.state(), ...facts, controls: controlChoices(h.actor.getSnapshot(), facts) };
  } finally {
    h.stop();
  }
}
