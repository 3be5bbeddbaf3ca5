/**
 * What the status says of each control action: whether the instance takes it now and, when not, why. Computed by
 * `refusalOf`, the function the control routes ask before they answer 409, so the dashboard's buttons and the
 * routes cannot disagree.
 */
import {
  CONTROL_ACTIONS,
  type ControlAction,
  type ControlFacts,
  type ControlView,
  refusalOf,
} from '../../machines/instance.refusals.ts';
import type { ControlChoice } from './status.ts';

export function controlChoices(snapshot: ControlView, facts: ControlFacts): Record<ControlAction, ControlChoice> {
  const choices = {} as Record<ControlAction, ControlChoice>;
  for (const action of CONTROL_ACTIONS) {
    const reason = refusalOf(snapshot, action, facts);
    choices[action] = { allowed: reason === null, reason };
  }
  return choices;
}
