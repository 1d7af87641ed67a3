// SPDX-License-Identifier: Apache-2.0
// Example.kt: edgebert from Kotlin: load a model, run a text (or a question and a context),
// print the model's outputs and, by task, the label, the answer or the sentence embedding.
// usage: java -cp example.jar:edgebert.jar ExampleKt MODEL.ebm TEXT [CONTEXT]
import org.edgebert.EdgeBertException
import org.edgebert.Model
import org.edgebert.Output
import org.edgebert.Task
import kotlin.system.exitProcess

// AutoCloseable.use needs kotlin-stdlib-jdk7, which Debian's kotlin 1.3 does not put on the class path.
inline fun <T : AutoCloseable, R> T.closing(block: (T) -> R): R {
    try {
        return block(this)
    } finally {
        close()
    }
}

fun main(args: Array<String>) {
    if (args.size < 2) {
        System.err.println("usage: ExampleKt MODEL.ebm TEXT [CONTEXT]")
        exitProcess(2)
    }
    try {
        Model.load(args[0]).closing { model ->
            val info = model.info()
            println("model: $info")
            model.newSession(2, 0).closing { session ->
                if (args.size > 2) session.runTextPair(args[1], args[2]) else session.runText(args[1])
                val shape = session.outputShape(Output.LAST_HIDDEN_STATE)
                println("tokens: ${session.inputIds().size}, last_hidden_state: ${shape.joinToString("x")}")
                when (info.task) {
                    Task.SEQUENCE_CLASSIFICATION -> {
                        val logits = session.output(Output.LOGITS)
                        val best = logits.indices.maxBy { i -> logits[i] } ?: 0
                        println("label: ${model.label(best)} (logits ${logits.joinToString()})")
                    }
                    Task.QUESTION_ANSWERING -> println("answer: ${session.bestSpan().text}")
                    Task.TOKEN_CLASSIFICATION -> println("token_logits: ${session.outputShape(Output.TOKEN_LOGITS).joinToString("x")}")
                    Task.SENTENCE_EMBEDDING -> println("embedding[0..3]: ${session.output(Output.SENTENCE_EMBEDDING).take(4)}")
                    else -> if (info.hasPooler) println("pooler_output[0..3]: ${session.output(Output.POOLER_OUTPUT).take(4)}")
                }
            }
        }
    } catch (e: EdgeBertException) {
        System.err.println("edgebert error ${e.status()}: ${e.message}")
        exitProcess(1)
    }
}
