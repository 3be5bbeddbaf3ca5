import type { Notice } from '../../bus.ts';
import type { Delivery } from '../sender.ts';
import type { DeliveryContext } from './context.ts';
import { postJson } from './http.ts';
import { viewOf } from './view.ts';

export interface JsonTarget {
  type: 'Json';
  url: string;
}

/** The notice itself, for a program to read: `{key, kind, title, message, fields, at}` with `at` in ISO 8601. */
export function noticeJson(n: Notice, name: string | undefined) {
  const view = viewOf(n, name);
  return {
    key: n.key,
    kind: n.kind,
    title: view.title,
    message: n.message,
    fields: view.fields,
    at: new Date(n.at).toISOString(),
  };
}

export function jsonDelivery(t: JsonTarget, n: Notice, ctx: DeliveryContext): Delivery {
  return postJson(t.url, noticeJson(n, ctx.name), ctx);
}
