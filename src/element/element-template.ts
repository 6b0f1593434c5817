/**
 * The element's shadow DOM: its parts (`::part()`) are what a host styles. The view fills in the texts.
 * One tag a line here; the string has no whitespace between them (none is shown in a grid or between blocks).
 */
export const TEMPLATE =
  '<div part="root">' +
  '<form id="start" part="form start-form" novalidate>' +
  '<label for="phone" part="label">_</label>' +
  '<input id="phone" part="input phone-input" type="tel" autocomplete="tel" inputmode="tel" aria-describedby="hint start-error">' +
  '<p id="hint" part="muted hint"></p>' +
  '<fieldset id="methods" part="methods" hidden><legend></legend><div id="options"></div></fieldset>' +
  '<p id="start-error" part="error" role="alert"></p>' +
  '<button id="go" part="button primary" type="submit"></button>' +
  '</form>' +
  '<section id="task" part="task" hidden>' +
  '<div id="screen" part="screen"></div>' +
  '<form id="code-form" part="form code-form" novalidate hidden>' +
  '<label for="code" id="code-label" part="label"></label>' +
  '<input id="code" part="input code-input" autocomplete="one-time-code" inputmode="numeric" pattern="[0-9]*" aria-describedby="attempts task-error">' +
  '<p id="attempts" part="muted attempts"></p>' +
  '<button id="check" part="button primary" type="submit"></button>' +
  '</form>' +
  '<p id="task-error" part="error" role="alert"></p>' +
  '<p id="timer" part="muted countdown"></p>' +
  '<div part="actions"><button id="resend" part="button secondary" type="button"></button><button id="switch" part="button secondary" type="button"></button><button id="cancel" part="button secondary" type="button"></button></div>' +
  '</section>' +
  '<section id="outcome" part="outcome" hidden>' +
  '<p id="title" part="outcome-title" tabindex="-1"></p>' +
  '<p id="text" part="outcome-text"></p>' +
  '<p id="outcome-error" part="error"></p>' +
  '<div part="actions"><button id="outcome-switch" part="button primary" type="button"></button><button id="again" part="button secondary" type="button"></button></div>' +
  '</section>' +
  '<p id="status" class="sr" role="status"></p>' +
  '</div>';
