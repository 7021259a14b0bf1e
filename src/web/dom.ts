/** A new element with a class and text: the pages build their DOM with this (never innerHTML). */
export function el (tag: string, className?: string, text?: string): HTMLElement {
  const e = document.createElement(tag)
  if (className !== undefined) e.className = className
  if (text !== undefined) e.textContent = text
  return e
}

/** A peer id as the pages show it: its last six characters ('robot' as is). */
export function short (peer: string): string {
  return peer === 'robot' ? 'robot' : peer.length > 14 ? `…${peer.slice(-6)}` : peer
}
