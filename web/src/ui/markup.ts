// Markup the views' forms share.

/** An <option> whose value is `v`, showing `label` (by default the value itself). */
export const option = (v: string | number, label: string | number = v) => `<option value="${v}">${label}</option>`;
