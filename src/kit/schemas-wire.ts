import type { Info } from './schemas.ts';

// Kept apart from schemas.ts so a game server can write its info without loading valibot at startup.

/** The connect address from either spelling ('' when neither is set; launchers then derive it). */
export function connectAddressOf(info: Pick<Info, 'connect_address' | 'connect_addrees'>): string {
  return info.connect_address ?? info.connect_addrees ?? '';
}

/** The info object as written on the wire: the connect address under both spellings, first. */
export function infoForWire(info: Info): Info {
  const { connect_address: _engine, connect_addrees: _spec, ...rest } = info;
  const address = connectAddressOf(info);
  return { connect_address: address, connect_addrees: address, ...rest };
}
