/**
 * Where an instance's statechart and its maintenance runner meet: the guards the daemon provides from the
 * maintenance plan, and what each fact the machine emits means for the runner.
 */
import { type InstanceContext, unaskedRelaunch } from '../../machines/instance.context.ts';
import type { InstanceEmitted } from '../../machines/instance.types.ts';
import type { Maintenance } from './maintenance.ts';

/** The machine's guards that read the plan; `runner` is a getter, as the runner is made after the machine. */
export function maintenanceGuards(runner: () => Maintenance) {
  return {
    leftForRestart: () => runner().leftForRestart(),
    // Crash handling is never held, the install it would bring is: the update waits for the hold's end.
    installHeld: ({ context }: { context: InstanceContext }) => unaskedRelaunch(context) && runner().installsHeld(),
  };
}

/** Tells the runner what a fact the machine emitted means for it; `context` is the machine's as it is now. */
export function tellMaintenance(runner: Maintenance, e: InstanceEmitted, context: InstanceContext): void {
  switch (e.type) {
    case 'alert':
      if (e.kind === 'stopped' || e.kind === 'failing') runner.serverGone();
      break;
    case 'restart':
      runner.serverGone();
      break;
    case 'update-checked':
      runner.updateChecked(e.available);
      break;
    case 'check-failed':
      // A policy asked with `update?when=` belongs to this check only.
      runner.updateChecked(false);
      break;
    case 'launch':
      // At daemon start the plan is not taken up yet: the first launch changes nothing.
      runner.launched(context.updatePending);
      break;
  }
}
