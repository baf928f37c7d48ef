// The char_lm corpus: a few KB of plain English written for attnlab and dedicated to the public
// domain. Short sentences, repeated words and a small alphabet (about 60 characters) give a
// tiny character model something learnable within a few hundred steps. No '_' or '|' appear, so
// decode can use '_' for an ignored target unambiguously.
#include "attnlab/train/tasks.hpp"

namespace attnlab {

const std::string& char_lm_corpus() {
    static const std::string text = R"corpus(The Lighthouse Keeper

There was once a lighthouse on a small island, and in the lighthouse lived a keeper named Ada.
Every evening she climbed the stairs, one hundred and twelve of them, and lit the great lamp.
Every morning she climbed them again and put it out. The ships that passed in the night never
saw her, but they saw the light, and the light told them where the rocks were.

Ada kept a book in which she wrote the weather. On Monday the wind came from the west. On
Tuesday the wind came from the west again, and the sea was grey. On Wednesday there was fog,
thick and white, and she rang the bell every minute until noon. On Thursday the sun came out,
and she could see the mainland, the church, the harbour and the long road over the hill.

"What do you do all day?" asked the boy who brought the bread on Fridays.
"I watch," said Ada. "I watch the sea, and the sky, and the birds. I count the ships."
"How many ships did you count this week?"
"Thirty-one. Seven fishing boats, twenty cargo ships, three ferries and one very old sailing
boat with red sails. I have seen that one before. It comes every spring."
The boy thought about this. "Do you ever get lonely?"
"Sometimes," said Ada. "But the sea is never the same twice, so I am never bored."

In the winter the storms came. The waves climbed the rocks and threw salt at the windows, and
the whole tower hummed like a string that someone had plucked. Ada did not sleep on those
nights. She sat by the lamp and trimmed the wick and wiped the glass, and when the dawn came
she wrote in her book: storm from the north, no ships lost.

A careful reader learns to look back. When a sentence begins with a name, the next sentence
often uses it again. When a door is opened, it is later closed. When a question is asked, an
answer follows. The keeper knew this about the sea: what went out with the tide came back with
the tide, and what the wind took in the morning it returned in the evening, a little changed.

One spring the old boat with red sails did not come. Ada waited. She looked for it in April
and in May, and she wrote in her book: no red sails. In June a letter came with the bread.
It was from the sailor, who was now too old to sail. He wrote that he had always steered by her
light, that he had counted the flashes, three short and one long, and that he had never once
been lost. He thanked her. He said that his granddaughter would bring the boat next year.

And so she did. The next spring the red sails came over the edge of the sea, a little faded,
and a young woman stood at the helm. She waved at the lighthouse, and Ada, at the top of the
stairs, waved back.

Notes on the Weather

Rain in the morning, clear by the afternoon. Wind from the south, light. The sea calm, the
tide high at four. Fog at dusk, lifting at nine. Rain in the morning, clear by the evening.
Wind from the west, strong. The sea rough, the tide high at five. Frost on the glass at dawn.
Snow on the hill, none on the island. Wind from the east, cold and dry. The sea flat and dark.

Rules of the Tower

Light the lamp at sunset. Put it out at sunrise. Wind the clock that turns the lens every
four hours. Keep the glass clean. Keep the oil dry. Ring the bell in fog. Write down every
ship, every storm and every change in the wind. Never leave the lamp unattended on a night of
bad weather. If a ship is in trouble, fire the rocket and raise the flag. Be patient.

A Short Lesson in Counting

One, two, three, four, five, six, seven, eight, nine, ten. Ten ships make a fleet; two fleets
make a busy week. If three ships pass before noon and four after, then seven ships have passed.
If the lamp flashes three times short and once long, and the pattern repeats every ten
seconds, then in one minute it flashes eighteen times short and six times long. A keeper who
can count can tell one lighthouse from another in the dark, because each has its own rhythm.

The boy who brought the bread grew up, and one day he asked if he could learn to keep the
light. Ada said yes. She showed him the stairs, the lamp, the clock and the book. She showed
him how to read the clouds and how to listen to the bell. "The most important thing," she
said, "is to pay attention. The sea tells you everything, if you are watching."
)corpus";
    return text;
}

}  // namespace attnlab
