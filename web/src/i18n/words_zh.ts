// 简体中文 of the words the engine's caption_match task writes its captions with (the shape
// classes, then size and place), keyed by the engine's word; the Chinese page shows a caption
// word by word in these.
export const CAPTION_WORDS_ZH: Record<string, string> = {
  square: '正方形',
  circle: '圆',
  triangle: '三角形',
  plus: '加号',
  cross: '叉',
  hbar: '横条',
  vbar: '竖条',
  diagonal: '对角线',
  antidiagonal: '反对角线',
  corner: '角',
  small: '小',
  large: '大',
  top: '上',
  bottom: '下',
  left: '左',
  right: '右',
};
