connect([generator, replicate(worker, 4)], [work_queue])
