// Types of event-view.js for the daemon's TypeScript (the page itself is plain JavaScript).

export function eventText(type: string, e: object, time: (at: number) => string): string;
export function eventLevel(type: string, e: object): '' | 'info';
